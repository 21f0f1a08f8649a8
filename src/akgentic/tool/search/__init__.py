"""akgentic.tool.search — SearchTool: web search, fetch and crawl through Tavily.

See README.md beside this file for every parameter with its range, how ``query`` and
``chunks_per_source`` bound an answer, and how ``crawl_instructions`` differs from the
inherited ``instructions``. Importing needs no extra; calling Tavily needs
``akgentic[search]`` and ``TAVILY_API_KEY``.
"""

from akgentic.tool.search.params import WebCrawl, WebFetch, WebSearch
from akgentic.tool.search.search import UNAVAILABLE, SearchTool

__all__ = ["UNAVAILABLE", "SearchTool", "WebCrawl", "WebFetch", "WebSearch"]
