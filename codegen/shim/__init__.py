"""The runtime shim shipped inside every generated package: ``_runtime/``, copied verbatim.

A generated package also carries ``_rules.py``, a verbatim copy of the runtime's
``mas/runtime/contracts/_rules.py``, beside ``_runtime/``, which imports it as ``from .. import
_rules``. Here that name is the runtime's own module, so the shim is tested against the one file
every copy is made from. ``_surface_runtime.py`` (resources and prompts, in packages that have
any) imports ``from . import _uri_template`` the same way: a verbatim copy of
``mas/runtime/contracts/uri_template.py``, which is this name here.
"""

from mas.runtime.contracts import _rules as _rules
from mas.runtime.contracts import uri_template as _uri_template

__all__ = ["_rules", "_uri_template"]
