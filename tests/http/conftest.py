import pytest

from stack import Stack


@pytest.fixture(scope="module")
def stack():
    s = Stack().start()
    yield s
    s.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Lets fixtures see whether the test failed (for screenshots)."""
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)
