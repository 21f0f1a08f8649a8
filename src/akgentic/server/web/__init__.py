"""The web page served at ``/``: watch and steer a team in a browser.

Plain ES modules and CSS under ``static/`` (no build step, no library), built only on
the server's public API — the same endpoints and event stream any client uses. See the
README beside this file.
"""

from akgentic.server.web.page import STATIC, install_page

__all__ = ["STATIC", "install_page"]
