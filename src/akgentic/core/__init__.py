"""akgentic.core: actors on pykka — the layer every team, agent and tool actor runs on.

The public surface is flat: everything below is importable from ``akgentic.core``.
See ``docs/core.md`` for the contract in prose.
"""

from akgentic.core._proxy import AskTimeoutError, DeadlockError, acting_for, current_actor
from akgentic.core.actor_system import EXTERNAL_ROLE, ActorSystem, ExternalContext, left_behind
from akgentic.core.address import (
    ActorAddress,
    ActorAddressImpl,
    ActorAddressProxy,
    ActorNameTakenError,
    ActorStartError,
    AddressError,
    address_name,
)
from akgentic.core.agent import Akgent, WarningError
from akgentic.core.agent_card import AgentCard
from akgentic.core.agent_config import AgentConfig, BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.data_home import user_data_dir
from akgentic.core.excerpt import clip, cut, excerpt
from akgentic.core.heap import freeze_import_heap
from akgentic.core.messages.message import (
    CancelMessage,
    Message,
    ResultMessage,
    StopRecursively,
    UserMessage,
)
from akgentic.core.messages.orchestrator import (
    ClosedNotification,
    ErrorMessage,
    EventMessage,
    NotificationMessage,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StartMessage,
    StateChangedMessage,
    StopMessage,
    TeamMetadataEvent,
    TeamStoppingEvent,
    TelemetryMessage,
    WarningMessage,
)
from akgentic.core.orchestrator import (
    EventSubscriber,
    Orchestrator,
    OrchestratorConfig,
    TelemetryBatch,
    TelemetryRecord,
    is_tool_actor,
)
from akgentic.core.serialization import (
    SerializableModel,
    SerializationError,
    deserialize,
    register_serializable,
    serialize,
)
from akgentic.core.user_proxy import UserProxy
from akgentic.core.words import counted
from akgentic.core.yaml_load import (
    MAX_YAML_BYTES,
    NotUtf8Error,
    YamlShapeError,
    YamlTooLargeError,
    check_yaml_size,
    load_yaml,
    not_a_file,
    read_yaml_file,
    yaml_text,
)
from akgentic.core.yaml_problem import yaml_problem

__all__ = [
    "EXTERNAL_ROLE",
    "MAX_YAML_BYTES",
    "ActorAddress",
    "ActorAddressImpl",
    "ActorAddressProxy",
    "ActorNameTakenError",
    "ActorStartError",
    "ActorSystem",
    "AddressError",
    "AgentCard",
    "AgentConfig",
    "Akgent",
    "AskTimeoutError",
    "BaseConfig",
    "BaseState",
    "CancelMessage",
    "ClosedNotification",
    "DeadlockError",
    "ErrorMessage",
    "EventMessage",
    "EventSubscriber",
    "ExternalContext",
    "Message",
    "NotUtf8Error",
    "NotificationMessage",
    "Orchestrator",
    "OrchestratorConfig",
    "ProcessedMessage",
    "ReceivedMessage",
    "ResultMessage",
    "SentMessage",
    "SerializableModel",
    "SerializationError",
    "StartMessage",
    "StateChangedMessage",
    "StopMessage",
    "StopRecursively",
    "TeamMetadataEvent",
    "TeamStoppingEvent",
    "TelemetryBatch",
    "TelemetryMessage",
    "TelemetryRecord",
    "UserMessage",
    "UserProxy",
    "WarningError",
    "WarningMessage",
    "YamlShapeError",
    "YamlTooLargeError",
    "acting_for",
    "address_name",
    "check_yaml_size",
    "clip",
    "counted",
    "current_actor",
    "cut",
    "deserialize",
    "excerpt",
    "freeze_import_heap",
    "is_tool_actor",
    "left_behind",
    "load_yaml",
    "not_a_file",
    "read_yaml_file",
    "register_serializable",
    "serialize",
    "user_data_dir",
    "yaml_problem",
    "yaml_text",
]
