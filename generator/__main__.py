import sys

from .tools import missing_tools_message

# Checked before the CLI imports libclang, jinja2 or black: a missing tool is one line.
_message = missing_tools_message()
if _message:
    print(_message, file=sys.stderr)
    sys.exit(2)

from .cli import main  # noqa: E402

sys.exit(main())
