"""Runtime shim shipped inside every generated package (see ``_runtime.py``; copied verbatim)."""
