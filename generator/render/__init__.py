"""The views: the context of one version (generator/context.py) -> the generated files.

base.py holds what they share; raw.py, checked.py and fast.py are one view each, and
import base.py and the context only (tests/generator/test_generator_imports.py holds the
generator's modules to an acyclic import graph).
"""
