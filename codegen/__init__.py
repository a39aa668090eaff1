"""toolgen: typed Python tool stubs for the ToolContract (the code generator)."""

__version__ = "0.1.0"
