"""pytest plugins of the test suite, registered by `pytest_plugins` in tests/conftest.py."""
