"""Implementation names that the rows measure and the report's verdicts read."""

# C through CuPy's own copy of libcudart (cupy_cudart.py): the baseline of CuPy's figure.
C_CUPY = "C, CuPy's libcudart"
# What no binding goes below: the same Python loop calling a C builtin that takes one int
# and returns it (operator.index), no foreign call.
FLOOR = "Python's floor: operator.index(a), the same loop"
