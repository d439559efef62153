"""Helpers the test files share, one module per subject: `from tests.support.homes import ...`.
No test imports another test module or a conftest (tests/test_imports.py)."""
