import pytest

from stack import Stack


@pytest.fixture(scope="module")
def stack():
    s = Stack().start()
    yield s
    s.stop()
