"""The test suite: one folder per area of the product, each with the fixtures only its files share
(its `conftest.py`); fixtures of several areas in `conftest.py` here; helpers in `support/`, imported
as `from tests.support.<module> import ...`; the xdist scheduling in `plugins/worker_units.py`.
Test data files live in `fixtures/`."""
