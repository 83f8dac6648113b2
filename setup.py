"""Builds the optional C move generator; everything else is configured in pyproject.toml.

``optional=True``: without a compiler the install still succeeds, and engine.moves then uses its pure-Python
generator.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "engine._movegen",
            sources=["engine/_movegen.c"],
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
            optional=True,
        )
    ]
)
