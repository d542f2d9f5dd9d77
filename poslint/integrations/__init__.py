"""poslint inside other tools: the flake8 plugin and Jupyter notebooks."""
