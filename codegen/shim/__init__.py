"""The runtime shim shipped inside every generated package: ``_runtime/``, copied verbatim.

A generated package also carries ``_rules.py``, a verbatim copy of the runtime's
``mas/runtime/contracts/_rules.py``, beside ``_runtime/``, which imports it as ``from .. import
_rules``. Here that name is the runtime's own module, so the shim is tested against the one file
every copy is made from.
"""

from mas.runtime.contracts import _rules as _rules
