"""Which runs a worker takes: those of its own recipe, named from any folder or machine."""

from __future__ import annotations

import pytest

from recipes.temporal._served import same_recipe


@pytest.mark.parametrize(
    ("asked", "served", "same"),
    [
        ("/srv/app/examples/release.py", "/srv/app/examples/release.py", True),
        ("/home/me/examples/release.py", "/srv/app/examples/release.py", True),
        ("/a/recipes.py:slow", "/b/recipes.py:slow", True),
        ("/a/recipes.py:slow", "/b/recipes.py:failing", False),
        ("/a/recipes.py", "/b/recipes.py:slow", False),
        ("/a/other.py", "/b/release.py", False),
        ("my_pkg.recipes:release", "my_pkg.recipes:release", True),
        ("my_pkg.recipes:release", "/b/release.py", False),
    ],
)
def test_same_recipe(asked: str, served: str, same: bool) -> None:
    assert same_recipe(asked, served) is same
