"""akgentic.tool.mcp — MCPTool: any MCP server's tools, as pydantic-ai toolsets.

See README.md beside this file for both connection models, the ``mcp.json`` format,
timeouts, prefixes and what happens when a server fails. Importing this package needs no
extra; opening a connection needs ``akgentic[mcp]``.
"""

from akgentic.tool.mcp.clash import MCPToolNameClashError
from akgentic.tool.mcp.config import (
    PYTHON_VARIABLE,
    MCPConfigError,
    MCPConnectionConfig,
    MCPHTTPConnectionConfig,
    MCPStdioConnectionConfig,
    expand_env,
    read_mcp_config,
)
from akgentic.tool.mcp.event import MCPServerUnavailable
from akgentic.tool.mcp.mcp import MCPProbeError, MCPTool

__all__ = [
    "PYTHON_VARIABLE",
    "MCPConfigError",
    "MCPConnectionConfig",
    "MCPHTTPConnectionConfig",
    "MCPProbeError",
    "MCPServerUnavailable",
    "MCPStdioConnectionConfig",
    "MCPTool",
    "MCPToolNameClashError",
    "expand_env",
    "read_mcp_config",
]
