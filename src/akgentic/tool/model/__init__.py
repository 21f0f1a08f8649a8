"""akgentic.tool.model — ModelTool: list the model roster, switch between its entries.

See README.md beside this file for the channels, the command grammar, the projection rule
behind ``ModelRow`` and the persisted ``ToolState.active_model`` record.
"""

from akgentic.tool.model.observer import ModelSwitchToolObserver
from akgentic.tool.model.state import ActiveModelState, ModelRow
from akgentic.tool.model.tool import (
    LISTING_HEADER,
    NO_MODELS,
    ActiveModel,
    ListModels,
    ModelTool,
    SwitchModel,
    render_listing,
)

__all__ = [
    "LISTING_HEADER",
    "NO_MODELS",
    "ActiveModel",
    "ActiveModelState",
    "ListModels",
    "ModelRow",
    "ModelSwitchToolObserver",
    "ModelTool",
    "SwitchModel",
    "render_listing",
]
