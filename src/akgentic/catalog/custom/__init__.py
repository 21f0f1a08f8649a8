"""The in-tree folder for your own catalog types: the platform never touches it.

Put a module here with a class declared ``@register_tool`` (see
``akgentic.catalog.manifest``); discovery imports every module of this package at start.
For a type you ship as its own package, use the ``akgentic.tools`` entry point instead.
"""
