"""The output side of the generator: how the package looks, from the intermediate form (``codegen/model.py``).

- ``render.py``: fills the Jinja2 templates (``templates/`` at the top level of a checkout,
  ``codegen/templates/`` in the wheel) and copies the runtime shim and the shared rules file.
- ``templates.py``: where the templates are (``templates_dir()``).
- ``formatting.py``: the one ``ruff format`` pass over every generated module.
- ``code_mode.py``: the code-mode stubs and their manifest.
- ``api_page.py``: ``api.md``, the package's API on one page.
"""
