"""WorkspaceTool: a shared tree behind a write gate, a git journal, document search and a
sandboxed shell — one card, every capability a ``Param | bool``.

=========================  ==========================================================
capability (default)       callable(s), all on TOOL_CALL by default
=========================  ==========================================================
``workspace_read``         ``workspace_read`` — text with line numbers; documents converted
``workspace_list``         ``workspace_list``
``workspace_glob``         ``workspace_glob``
``workspace_grep``         ``workspace_grep``
``workspace_view``         ``workspace_view`` — an image the model can see
``workspace_search``       ``workspace_search`` — hybrid search over the tree's documents
``workspace_write``        ``workspace_write``
``workspace_edit``         ``workspace_edit`` — the seven-strategy matching cascade
``workspace_multi_edit``   ``workspace_multi_edit`` — several edits, all or nothing
``workspace_patch``        ``workspace_patch`` — unified diffs, hunk context verified
``workspace_delete``       ``workspace_delete``
``workspace_mkdir``        ``workspace_mkdir``
``workspace_exec`` (off)   ``workspace_exec`` and ``workspace_exec_result``
=========================  ==========================================================

``workspace_exec`` exposed on COMMAND serves both of its callables as commands
(``/workspace_exec <command line>``, ``/workspace_exec_result <run id>``), and what they
answer names the ``/command`` a person types where the model's answer names its call.

``read_only=True`` serves the first six only. Reads run on the agent's own thread and tell
``#Workspace-…`` what was read; mutations ask it (the closure needs the verdict); exec asks
it to start the run and then waits on the agent's thread, bounded by the budget.

Wiring (:meth:`WorkspaceTool.observer`): the tree is derived once — ``_team/<team_id>``,
``_id/<workspace_id>`` or ``_meta/<values of the team's metadata>``, under the principal or
``_shared`` — the tree and its siblings are created, and the tree's actor is bound with
``getChildrenOrCreate`` under ``#Workspace-<scope>/<kind>/<leaf>``. A shared tree the
platform does not permit, or metadata keys the team cannot fill, fail the bind.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import posixpath
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Self, cast

from pydantic import (
    Field,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from akgentic.core import ActorAddress, Orchestrator, clip, excerpt
from akgentic.core.words import counted
from akgentic.tool.core import (
    COMMAND,
    TOOL_CALL,
    ActorToolObserver,
    BaseToolParam,
    Channels,
    RestOfLine,
    ToolCard,
    ToolObserver,
    attach_param,
    resolve_param,
    serve,
)
from akgentic.tool.core.arguments import SearchLimit
from akgentic.tool.core.team_actor import ask_tool_actor, bind_team_actor, require_team_observer
from akgentic.tool.core.time_bound import on_cancel
from akgentic.tool.errors import RetriableError, ToolNotWiredError
from akgentic.tool.sandbox import (
    ALLOWED_COMMANDS,
    CommandRefusedError,
    ExecLimits,
    validate_command,
)
from akgentic.tool.vector_store import SemanticIndex, VectorStoreParam
from akgentic.tool.workspace.actor import WorkspaceActor
from akgentic.tool.workspace.execution import (
    RESULT_TOOL,
    ExecBudget,
    ExecRun,
    RunBook,
    render_run,
    result_call,
    wait_run,
)
from akgentic.tool.workspace.globbing import GlobPattern, glob_paths
from akgentic.tool.workspace.grep import PatternTooSlowError, matching_lines
from akgentic.tool.workspace.journal import Identity, left_out_note
from akgentic.tool.workspace.models import (
    MAX_GLOB_RESULTS,
    MAX_GREP_RESULTS,
    MAX_LINE_CHARS,
    MAX_LIST_ENTRIES,
    MAX_READ_LINES,
    CalledAs,
    DeleteFile,
    EditFile,
    EditItem,
    MakeDir,
    Mutation,
    MutationOutcome,
    PatchFiles,
    WorkspaceConfig,
    WriteFile,
    content_sha,
    path_error,
    read_regular,
)
from akgentic.tool.workspace.readers import (
    IMAGE_EXTENSIONS,
    DocumentReader,
    cut_line,
    load_image,
    number_lines,
)
from akgentic.tool.workspace.search import WORKSPACE_COLLECTION, DocumentIndex
from akgentic.tool.workspace.workspace import (
    KIND_ID,
    KIND_META,
    KIND_TEAM,
    Filesystem,
    FileTooLargeError,
    PathEscapeError,
    WorkspacePath,
    get_workspace,
    is_staging_name,
    metadata_leaf,
    resolve_workspace_path,
    utf8_name,
    validate_workspace_id,
)

__all__ = [
    "ASK_TIMEOUT",
    "WorkspaceDelete",
    "WorkspaceEdit",
    "WorkspaceExec",
    "WorkspaceGlob",
    "WorkspaceGrep",
    "WorkspaceList",
    "WorkspaceMkdir",
    "WorkspaceMultiEdit",
    "WorkspacePatch",
    "WorkspaceRead",
    "WorkspaceSearch",
    "WorkspaceTool",
    "WorkspaceView",
    "WorkspaceWrite",
]

logger = logging.getLogger("akgentic.tool.workspace")

ASK_TIMEOUT = 60.0
"""Seconds a mutation waits for ``#Workspace-…`` (local I/O, a commit, a flock held by
another process for one write): hitting it means the actor or the tree is wedged."""

_EDITS: TypeAdapter[list[EditItem]] = TypeAdapter(list[EditItem])


# -- the capability params ----------------------------------------------------------------------


class WorkspaceRead(BaseToolParam):
    """``workspace_read``; ``max_lines`` — the most lines one read shows."""

    max_lines: int = Field(default=MAX_READ_LINES, ge=1, le=20_000)


class WorkspaceList(BaseToolParam):
    """``workspace_list``; ``max_entries`` — the most entries one listing shows."""

    max_entries: int = Field(default=MAX_LIST_ENTRIES, ge=1, le=10_000)


class WorkspaceGlob(BaseToolParam):
    """``workspace_glob``; ``max_results`` — the most paths one glob returns."""

    max_results: int = Field(default=MAX_GLOB_RESULTS, ge=1, le=10_000)


GREP_SECONDS = 20.0
"""A grep's default matching budget: far above a normal grep of a 5,000-file tree."""
GREP_BATCH_CHARS = 1 << 20
GREP_BATCH_FILES = 256
"""A grep sends its worker the files it read in batches of about this much text (one
round trip each), so a normal grep pays a few round trips, not one per file."""


class WorkspaceGrep(BaseToolParam):
    """``workspace_grep``; ``max_results`` — the most matching lines one grep returns."""

    max_results: int = Field(default=MAX_GREP_RESULTS, ge=1, le=10_000)
    timeout_seconds: float = Field(default=GREP_SECONDS, gt=0, le=600)
    """How long one grep's matching may take: past it the matching is stopped (its worker
    process killed) and the model told to simplify the pattern or narrow the files."""


ListDepth = Annotated[int, Field(ge=1, le=5)]
"""``workspace_list``'s ``depth``: out of 1..5 it is refused with the bounds (a depth of 0
was listed as 1 and one of 9 as 5, the caller never told), and the model sees them in the
tool's schema."""


class WorkspaceView(BaseToolParam):
    """``workspace_view``; ``max_side`` — images are resized so their longest side fits."""

    max_side: int = Field(default=1568, ge=64, le=8192)


class WorkspaceSearch(BaseToolParam):
    """``workspace_search``; ``limit`` — the default number of passages returned: 1 to 100,
    as the callable's own ``limit`` is."""

    limit: SearchLimit = 8


class WorkspaceWrite(BaseToolParam):
    """``workspace_write``: create or replace a whole file."""


class WorkspaceEdit(BaseToolParam):
    """``workspace_edit``: replace one piece of text in a file."""


class WorkspaceMultiEdit(BaseToolParam):
    """``workspace_multi_edit``: several replacements in one file, all or nothing."""


class WorkspacePatch(BaseToolParam):
    """``workspace_patch``: apply a unified diff."""


class WorkspaceDelete(BaseToolParam):
    """``workspace_delete``: remove a file or a directory."""


class WorkspaceMkdir(BaseToolParam):
    """``workspace_mkdir``: create a directory."""


class WorkspaceExec(BaseToolParam):
    """``workspace_exec`` and ``workspace_exec_result``: commands in the sandbox.

    - ``timeout_seconds``, ``memory_mb``, ``max_processes``, ``max_output_chars`` — the
      run's bounds (a command killed at its budget answers ``exit_code: 124``);
    - ``network`` — False (default): the command has no network at all; True: it may reach
      the network;
    - ``cold_start_seconds`` — how long a backend that is not ready yet may take to start,
      before the run's own budget begins;
    - ``poll_attempts`` — ``-1`` wait the run out (default), ``N`` look N x
      ``poll_delay_seconds`` then hand back a run id, ``0`` hand back the run id at once;
    - ``poll_delay_seconds`` — the seconds between two looks at a run;
    - ``allowed_commands`` — the programs a command line may start (default: the sandbox's
      :data:`~akgentic.tool.sandbox.ALLOWED_COMMANDS`).
    """

    timeout_seconds: float = Field(
        default=60.0,
        gt=0,
        le=3600,
        description="The run's time budget; a command killed at it answers exit_code 124.",
    )
    memory_mb: int = Field(
        default=1024, ge=32, le=65536, description="The run's memory budget, in MiB."
    )
    max_processes: int = Field(
        default=64, ge=4, le=4096, description="The most processes the run may have at once."
    )
    max_output_chars: int = Field(
        default=30_000,
        ge=1_000,
        le=1_000_000,
        description="The most characters of output kept from the run.",
    )
    network: bool = False
    cold_start_seconds: float = Field(default=20.0, gt=0, le=600)
    poll_attempts: int = Field(default=-1, ge=-1)
    poll_delay_seconds: float = Field(default=2.0, gt=0, le=60)
    allowed_commands: list[str] | None = None

    def budget(self) -> ExecBudget:
        return ExecBudget(
            limits=ExecLimits(
                timeout_seconds=self.timeout_seconds,
                memory_mb=self.memory_mb,
                max_processes=self.max_processes,
                max_output_chars=self.max_output_chars,
                network=self.network,
            ),
            cold_start_seconds=self.cold_start_seconds,
            poll_attempts=self.poll_attempts,
            poll_delay_seconds=self.poll_delay_seconds,
        )

    def allowlist(self) -> frozenset[str]:
        return (
            ALLOWED_COMMANDS if self.allowed_commands is None else frozenset(self.allowed_commands)
        )


class WorkspaceExecResult(BaseToolParam):
    """``/workspace_exec_result <run id>``: the key of the second command ``WorkspaceExec``
    serves when it exposes COMMAND (a person reads the outcome of a run by its id, as the
    model does with the tool). Not a card field: ``workspace_exec`` configures both."""


_PARAMS: dict[str, type[BaseToolParam]] = {
    "workspace_read": WorkspaceRead,
    "workspace_list": WorkspaceList,
    "workspace_glob": WorkspaceGlob,
    "workspace_grep": WorkspaceGrep,
    "workspace_view": WorkspaceView,
    "workspace_search": WorkspaceSearch,
    "workspace_write": WorkspaceWrite,
    "workspace_edit": WorkspaceEdit,
    "workspace_multi_edit": WorkspaceMultiEdit,
    "workspace_patch": WorkspacePatch,
    "workspace_delete": WorkspaceDelete,
    "workspace_mkdir": WorkspaceMkdir,
    "workspace_exec": WorkspaceExec,
}
_WRITE_SIDE = frozenset(
    {
        "workspace_write",
        "workspace_edit",
        "workspace_multi_edit",
        "workspace_patch",
        "workspace_delete",
        "workspace_mkdir",
        "workspace_exec",
    }
)


class WorkspaceTool(ToolCard):
    """The team's tree, behind the write gate; see the module docstring and README.md.

    - ``read_only`` — serve the read side only.
    - ``workspace_id`` — a named tree (``_id/<workspace_id>``) instead of the team's.
    - ``workspace_metadata_keys`` — a tree keyed by these fields of the team's metadata.
    - ``workspace_sharable`` — ask for the ``_shared`` scope (the platform must permit the
      kind through ``AKGENTIC_WORKSPACE_SHARED_KINDS``).
    - ``git_journal`` — commit every accepted mutation, authored by the agent.
    - ``vector_store`` — where the tree's document chunks are embedded.
    """

    read_only: bool = False
    workspace_id: str | None = None
    workspace_metadata_keys: list[str] | None = None
    workspace_sharable: bool = False
    git_journal: bool = False
    vector_store: VectorStoreParam = Field(default_factory=VectorStoreParam)

    workspace_read: WorkspaceRead | bool = True
    workspace_list: WorkspaceList | bool = True
    workspace_glob: WorkspaceGlob | bool = True
    workspace_grep: WorkspaceGrep | bool = True
    workspace_view: WorkspaceView | bool = True
    workspace_search: WorkspaceSearch | bool = True
    workspace_write: WorkspaceWrite | bool = True
    workspace_edit: WorkspaceEdit | bool = True
    workspace_multi_edit: WorkspaceMultiEdit | bool = True
    workspace_patch: WorkspacePatch | bool = True
    workspace_delete: WorkspaceDelete | bool = True
    workspace_mkdir: WorkspaceMkdir | bool = True
    workspace_exec: WorkspaceExec | bool = False

    _workspace: WorkspacePath | None = PrivateAttr(default=None)
    _fs: Filesystem | None = PrivateAttr(default=None)
    _actor: ActorAddress | None = PrivateAttr(default=None)
    _index: SemanticIndex | None = PrivateAttr(default=None)
    _identity: Identity | None = PrivateAttr(default=None)

    # -- validation at construction (catalog save, team creation, resume) -------------------------
    @field_validator("workspace_id")
    @classmethod
    def _valid_id(cls, value: str | None) -> str | None:
        return None if value is None else validate_workspace_id(value)

    @field_validator("workspace_metadata_keys")
    @classmethod
    def _valid_keys(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        if not value or any(not k or not k.isidentifier() for k in value):
            raise ValueError("workspace_metadata_keys must be field names of the team's metadata")
        if len(set(value)) != len(value):
            raise ValueError("workspace_metadata_keys lists a key twice")
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        if self.workspace_id is not None and self.workspace_metadata_keys is not None:
            raise ValueError(
                "give workspace_id (a named tree) or workspace_metadata_keys (a tree keyed by "
                "the team's metadata), not both"
            )
        return self

    # -- wiring -----------------------------------------------------------------------------------
    def observer(self, observer: ToolObserver) -> Self:
        """Attach the agent, derive the tree, create it, and bind its ``#Workspace-…`` actor.

        Raises TypeError / ValueError (at team creation, not at first use) when the agent is
        not in a team, the platform does not permit a shared tree, or metadata keys cannot
        be filled.
        """
        super().observer(observer)
        team = require_team_observer(observer, "WorkspaceTool", "#Workspace-<scope>/<kind>/<leaf>")
        workspace = self._derive(team)
        self._workspace = workspace
        self._fs = get_workspace(workspace)
        self._identity = Identity(name=team.myAddress.name, team=str(team.team_id or ""))
        search = resolve_param(self.workspace_search, WorkspaceSearch) is not None
        if search:
            self._index = SemanticIndex.bind(
                self.vector_store, team, WORKSPACE_COLLECTION, tenant=workspace.name, team_id=""
            )
        config = WorkspaceConfig(
            name=workspace.actor_name,
            workspace=workspace,
            vector_store=self.vector_store,
            search=search,
        )
        self._actor = bind_team_actor(team, WorkspaceActor, config, ASK_TIMEOUT)
        return self

    def _derive(self, team: ActorToolObserver) -> WorkspacePath:
        if self.workspace_id is not None:
            kind, leaf = KIND_ID, self.workspace_id
        elif self.workspace_metadata_keys is not None:
            assert team.orchestrator is not None
            orchestrator = team.proxy_ask(team.orchestrator, Orchestrator, ASK_TIMEOUT)
            metadata = orchestrator.get_metadata()
            values = metadata.model_dump() if metadata is not None else None
            kind, leaf = KIND_META, metadata_leaf(values, self.workspace_metadata_keys)
        else:
            if team.team_id is None:
                raise ValueError("WorkspaceTool needs an agent in a team (its tree is the team's)")
            kind, leaf = KIND_TEAM, str(team.team_id)
        return resolve_workspace_path(kind=kind, leaf=leaf, sharable=self.workspace_sharable)

    @property
    def workspace(self) -> WorkspacePath:
        """The tree this card is bound to (after wiring)."""
        if self._workspace is None:
            raise ToolNotWiredError("WorkspaceTool is not wired: build it through ToolFactory")
        return self._workspace

    def _wired(self) -> tuple[ActorToolObserver, Filesystem, ActorAddress, Identity]:
        observer = cast(ActorToolObserver, self.get_observer())
        if self._fs is None or self._actor is None or self._identity is None:
            raise ToolNotWiredError("WorkspaceTool is not wired: build it through ToolFactory")
        return observer, self._fs, self._actor, self._identity

    # -- the hooks --------------------------------------------------------------------------------
    def _served(self, channel: Channels) -> list[tuple[str, BaseToolParam]]:
        out = []
        for name, cls in _PARAMS.items():
            if self.read_only and name in _WRITE_SIDE:
                continue
            param = serve(getattr(self, name), cls, channel)
            if param is not None:
                out.append((name, param))
        return out

    def _build(self, name: str, param: BaseToolParam) -> list[Callable[..., Any]]:
        builder: Callable[[Any], list[Callable[..., Any]]] = getattr(self, f"_{name}_fn")
        return builder(param)

    def get_tools(self) -> list[Callable[..., Any]]:
        return [fn for name, param in self._served(TOOL_CALL) for fn in self._build(name, param)]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        commands: dict[type[BaseToolParam], Callable[..., Any]] = {}
        for name, param in self._served(COMMAND):
            if isinstance(param, WorkspaceExec):  # both, in the words of a person
                run, result = self._workspace_exec_fn(param, COMMAND)
                commands[type(param)], commands[WorkspaceExecResult] = run, result
            else:
                commands[type(param)] = self._build(name, param)[0]
        return commands

    # -- shared steps -----------------------------------------------------------------------------
    def _called(self) -> CalledAs:
        """How this card's model calls each of its tools (``called_as``), for the texts the
        tree's actor and the shared helpers word: a toolset's card is told its set when it is
        built and again when it is wired, so this is asked at each call, never kept."""
        return CalledAs(names={name: self.called_as(name) for name in (*_PARAMS, RESULT_TOOL)})

    def _resolve(self, path: str) -> tuple[Path, str]:
        _, fs, _, _ = self._wired()
        try:
            real = fs.resolve(path)
        except (OSError, ValueError) as exc:
            raise path_error(exc, path, self._called()) from None
        return real, fs.relative(real)

    def _observe(self, rel: str, data: bytes) -> None:
        """Tell ``#Workspace-…`` what was read: the reader needs nothing back."""
        observer, _, actor, identity = self._wired()
        try:
            observer.proxy_tell(actor, WorkspaceActor).observe(identity, rel, content_sha(data))
        except Exception as exc:  # a stopped tree: the next mutation will say so
            logger.warning("could not record a read of %s: %r", rel, exc)

    def _mutate(self, mutation: Mutation) -> str:
        observer, _, actor, identity = self._wired()
        journal, called = self.git_journal, self._called()
        outcome: MutationOutcome = ask_tool_actor(
            observer,
            actor,
            WorkspaceActor,
            lambda a: a.mutate(identity, mutation, journal, called),
            what=f"workspace {mutation.op}",
            label=f"The workspace ({self.workspace.actor_name})",
            timeout=ASK_TIMEOUT,
        )
        left_out = f"; {left_out_note(outcome.left_out)}" if outcome.left_out else ""
        if outcome.commit:
            return f"{outcome.summary} (journal {outcome.commit[:10]}{left_out})"
        if outcome.unrecorded:
            unrecorded = outcome.unrecorded
            return f"{outcome.summary} (written; the journal could not record it: {unrecorded})"
        if left_out:
            return f"{outcome.summary} (written{left_out})"
        return outcome.summary

    # -- the read side ----------------------------------------------------------------------------
    def _workspace_read_fn(self, param: WorkspaceRead) -> list[Callable[..., Any]]:
        card, max_lines, reader = self, param.max_lines, DocumentReader()
        listing = self.called_as("workspace_list")

        def workspace_read(path: str, start_line: int = 1, end_line: int | None = None) -> str:
            """Read a file of the workspace, with line numbers.

            Text is shown one numbered line per line; pass start_line / end_line (1-based,
            inclusive) to read part of a long file. PDF, DOCX, XLSX and PPTX documents are
            converted to text. Reading a file is what lets you change it: a file someone
            else changed since you last read it must be read again before you write it.
            """
            if start_line < 1:
                raise RetriableError(
                    f"start_line counts from 1 (the file's first line), not {start_line}: "
                    f"pass 1 or more"
                )
            if end_line is not None and end_line < start_line:
                raise RetriableError(
                    f"end_line {end_line} is before start_line {start_line}: pass an end_line "
                    f"of {start_line} or more, or leave it out to read on to the end"
                )
            real, rel = card._resolve(path)
            if real.is_dir():
                raise RetriableError(f"{rel} is a directory; use {listing} to see what is in it")
            called = card._called()
            data = read_regular(card._wired()[1], real, path, reader.max_bytes, called)
            try:
                text = reader.extract(rel, data, called("workspace_view"))
            except ValueError as exc:
                raise RetriableError(str(exc)) from None
            card._observe(rel, data)
            if not text:
                return f"{rel} (empty file)"
            body, first, last, total = number_lines(
                text, start_line, end_line, max_lines, MAX_LINE_CHARS
            )
            if first > total:
                raise RetriableError(
                    f"{rel} has {counted(total, 'line')}; start_line {start_line} is past its end"
                )
            head = f"{rel} (lines {first}-{last} of {total})"
            more = (
                f"\n[… {counted(total - last, 'more line')}: read on with start_line={last + 1}]"
                if last < total
                else ""
            )
            return f"{head}\n{body}{more}"

        return [workspace_read]

    def _workspace_list_fn(self, param: WorkspaceList) -> list[Callable[..., Any]]:
        card, cap = self, param.max_entries

        def workspace_list(path: str = ".", depth: ListDepth = 1) -> str:
            """List a directory of the workspace (the root by default).

            Directories end with '/', files show their size. depth 2 or 3 also lists what
            is inside the subdirectories.
            """
            real, rel = card._resolve(path)
            _, fs, _, _ = card._wired()
            try:
                if not real.is_dir():
                    return f"{rel} ({counted(_size(fs, real), 'byte')})"
                entries = _entries(fs, real)
            except OSError as exc:
                raise path_error(exc, path, card._called()) from None
            lines: list[str] = []
            _list_into(fs, real, entries, "", depth, lines, cap)
            if not lines:
                return f"{rel}/ is empty"
            more = f"\n[… listing cut at {cap} entries]" if len(lines) >= cap else ""
            return f"{rel}/\n" + "\n".join(lines) + more

        return [workspace_list]

    def _workspace_glob_fn(self, param: WorkspaceGlob) -> list[Callable[..., Any]]:
        card, cap = self, param.max_results

        def workspace_glob(pattern: str) -> str:
            """Find the workspace's paths matching a glob pattern, e.g. '**/*.py' or 'docs/*.md'.

            Patterns are relative to the workspace root; '**' matches any depth.
            """
            _, fs, _, _ = card._wired()
            if not pattern.strip():
                raise RetriableError("give a glob pattern such as '**/*.py'")
            lexical = posixpath.normpath(pattern)
            if pattern.startswith(("/", "~")) or lexical.split("/")[0] == "..":
                raise path_error(PathEscapeError(pattern), pattern, card._called())
            if ".." in pattern.split("/"):  # inside the tree all the same: no escape to say
                raise RetriableError(
                    f"a glob pattern takes no '..' (got {excerpt(pattern)}): write it from the "
                    f"workspace root, e.g. {excerpt(lexical)}"
                )
            try:
                parsed = GlobPattern.parse(pattern)
            except ValueError as exc:
                raise RetriableError(
                    f"Invalid glob pattern {excerpt(pattern)}: {exc}; use '*' for the root's "
                    "entries or '**/*' for everything"
                ) from None
            paths: list[str] = []
            seen: set[str] = set()
            # lazily: the scan stops at the first path past the cap (cap + 1 says there were
            # more), never listing a whole tree to keep 500 of it
            for rel, _ in glob_paths(fs, parsed):
                try:
                    real = fs.resolve(rel)  # a symlink inside the tree: where it points
                except (OSError, ValueError):
                    continue
                if parsed.folders_only and not real.is_dir():
                    continue  # a symlink to a file, for a pattern naming folders
                shown = fs.relative(real) + ("/" if real.is_dir() else "")
                if shown in seen:  # a symlink inside the tree, to a path already listed
                    continue
                seen.add(shown)
                paths.append(shown)
                if len(paths) > cap:
                    break
            if not paths:
                return f"No path matches {excerpt(pattern)}."
            if len(paths) <= cap:
                return "\n".join(sorted(paths))
            return "\n".join(sorted(paths[:cap])) + (
                f"\n[… cut at the first {cap} paths found, in no order: more match; narrow the "
                f"pattern to a folder, e.g. 'src/**/*.py']"
            )

        return [workspace_glob]

    def _workspace_grep_fn(self, param: WorkspaceGrep) -> list[Callable[..., Any]]:
        card, cap, reader = self, param.max_results, DocumentReader()

        def workspace_grep(
            pattern: str, path: str = ".", include: str | None = None, ignore_case: bool = False
        ) -> str:
            """Search the workspace's text files for a regular expression (Python syntax).

            Answers 'path:line: text' per matching line. path narrows the search to a
            directory or a file; include filters file names by a glob such as '*.py'.
            """
            flags = int(re.IGNORECASE) if ignore_case else 0
            try:
                re.compile(pattern, flags)  # here: a bad pattern is said before any file is read
            except re.error as exc:
                raise RetriableError(f"Invalid regex pattern: {exc}") from None
            real, _ = card._resolve(path)
            _, fs, _, _ = card._wired()
            files = [real] if real.is_file() else list(fs.iter_files(real)) if real.is_dir() else []
            if not files and not real.exists():
                raise RetriableError(f"File not found: {clip(path)}")
            hits: list[str] = []
            too_large: list[str] = []  # refused on their size, never read: said at the end
            batch: list[tuple[str, str]] = []  # (rel, text) matched together in the worker
            left = [float(param.timeout_seconds)]  # the call's matching budget, spent

            def flush() -> bool:
                """Match ``batch`` (emptied); True once ``cap`` lines matched."""
                texts = [text for _, text in batch]
                started = time.monotonic()
                try:
                    found = matching_lines(pattern, flags, texts, cap - len(hits), left[0])
                except PatternTooSlowError:
                    raise RetriableError(
                        f"The pattern {excerpt(pattern)} took longer than "
                        f"{param.timeout_seconds:g}s to match and was stopped: simplify it (no "
                        "nested quantifiers such as (a+)+ or (a|a)*, fewer .* in a row) or "
                        "narrow the files with path or include"
                    ) from None
                except (OSError, EOFError) as exc:
                    raise RetriableError(
                        f"grep could not run its matcher ({exc}); try again"
                    ) from None
                left[0] -= time.monotonic() - started
                hits.extend(
                    f"{batch[i][0]}:{number}: {cut_line(line, MAX_LINE_CHARS)}"
                    for i, number, line in found
                )
                batch.clear()
                return len(hits) >= cap

            size = 0
            for file in files:
                rel = fs.relative(file)
                if include and not (
                    fnmatch.fnmatch(file.name, include) or fnmatch.fnmatch(rel, include)
                ):
                    continue
                try:
                    text = reader.as_text(rel, fs.read_bytes(file, reader.max_bytes))
                except FileTooLargeError:
                    too_large.append(rel)
                    continue
                except OSError:  # gone, not a file, or a folder above it swapped for a link
                    continue
                if text is None:
                    continue
                batch.append((rel, text))
                size += len(text)
                if size >= GREP_BATCH_CHARS or len(batch) >= GREP_BATCH_FILES:
                    size = 0
                    if flush():
                        return "\n".join(hits) + f"\n[… cut at {cap} matches; narrow the search]"
            if batch and flush():
                return "\n".join(hits) + f"\n[… cut at {cap} matches; narrow the search]"
            answer = "\n".join(hits) if hits else f"No line matches {excerpt(pattern)}."
            if too_large:
                shown = ", ".join(too_large[:10])
                more = f" and {len(too_large) - 10} more" if len(too_large) > 10 else ""
                answer += (
                    f"\n[not searched: {shown}{more}, over the {reader.max_bytes:,} bytes a "
                    f"read takes]"
                )
            return answer

        return [workspace_grep]

    def _workspace_view_fn(self, param: WorkspaceView) -> list[Callable[..., Any]]:
        card, max_side, read = self, param.max_side, self.called_as("workspace_read")

        def workspace_view(path: str) -> list[Any]:
            """Look at an image of the workspace (PNG, JPEG, GIF, WebP, BMP): you see the image."""
            from pydantic_ai import BinaryContent

            real, rel = card._resolve(path)
            if real.suffix.lower() not in IMAGE_EXTENSIONS:
                raise RetriableError(
                    f"{rel} is not an image ({', '.join(sorted(IMAGE_EXTENSIONS))}); use "
                    f"{read} for text and documents"
                )
            max_bytes = DocumentReader().max_bytes
            data = read_regular(card._wired()[1], real, path, max_bytes, card._called())
            try:
                image, media, note = load_image(
                    data, real.suffix, card.workspace.index_dir / "thumbs", max_side
                )
            except (ValueError, OSError) as exc:
                raise RetriableError(f"{rel}: {exc}") from None
            card._observe(rel, data)
            return [f"{rel}: {note}", BinaryContent(data=image, media_type=media)]

        return [workspace_view]

    def _workspace_search_fn(self, param: WorkspaceSearch) -> list[Callable[..., Any]]:
        card, default_limit, called = self, param.limit, self.called_as("workspace_search")
        listing, read = self.called_as("workspace_list"), self.called_as("workspace_read")

        def workspace_search(
            query: str, limit: SearchLimit = default_limit, path: str = "."
        ) -> str:
            """Find passages in the workspace's documents by words (and by meaning when
            embeddings are on). path limits the search to a folder (the whole workspace by
            default). Answers path:lines and the passage; read the file for more."""
            if not query.strip():
                raise RetriableError(f"{called} needs a query: words the passage is about")
            real, rel = card._resolve(path)
            if not real.is_dir():
                if real.exists():
                    raise RetriableError(
                        f"{rel} is a file: path limits the search to a folder; read the file "
                        f"with {read}, or pass its folder"
                    )
                raise RetriableError(
                    f"Folder not found: {clip(path)}; {listing} shows the workspace's folders"
                )
            observer, fs, actor, _ = card._wired()
            index = card._index
            semantic: dict[str, float] = {}
            if index is not None and index.available:
                semantic = index.similar(query, max(3 * limit, 20))
                observer.proxy_tell(actor, WorkspaceActor).catch_up()  # what failed, again
            docs = DocumentIndex(card.workspace, fs)
            start = None if rel == "." else real
            alpha = card.vector_store.hybrid_alpha
            hits = docs.search(query, limit, semantic, alpha, start)
            cut = card._search_cut(docs, rel) if docs.left_out else ""
            where = "" if start is None else f" in {rel}/"
            if not hits:
                return f"No passage matches {excerpt(query)}{where}.{cut}"
            out = []
            for hit in hits:
                passage = "\n    ".join(hit.text.split("\n")[:6])
                out.append(
                    f"{hit.path}:{hit.start_line}-{hit.end_line} ({hit.score:.2f})\n    {passage}"
                )
            return "\n".join(out) + cut

        return [workspace_search]

    def _search_cut(self, docs: DocumentIndex, rel: str) -> str:
        """The note a search past the file cap ends with: how many files it left out, and
        how to look at a part of the tree instead (the card's own tools that can)."""
        ways = [f"{self.called_as('workspace_search')}(query, path='a/folder')"]
        if self.workspace_grep is not False:
            ways.append(f"{self.called_as('workspace_grep')}(pattern, path='a/folder')")
        if self.workspace_glob is not False:
            ways.append(f"{self.called_as('workspace_glob')}('a/folder/**/*.md')")
        scope = "the tree" if rel == "." else f"{rel}/"
        return (
            f"\n[searched the first {counted(docs.max_files, 'file')} of {scope} only: "
            f"{counted(docs.left_out, 'file')} left out; narrow it with {' or '.join(ways)}]"
        )

    # -- the write side ---------------------------------------------------------------------------
    def _workspace_write_fn(self, param: WorkspaceWrite) -> list[Callable[..., Any]]:
        card = self

        def workspace_write(path: str, content: str) -> str:
            return card._mutate(WriteFile(path=path, content=content))

        workspace_write.__doc__ = (  # names its siblings as the model calls them
            "Create a file, or replace a whole file, with content.\n\n"
            f"Replacing an existing file needs a prior {self.called_as('workspace_read')} of "
            "it, and is refused\nif the file changed since (read it again). For a change to "
            f"part of a file,\nprefer {self.called_as('workspace_edit')}."
        )
        return [workspace_write]

    def _workspace_edit_fn(self, param: WorkspaceEdit) -> list[Callable[..., Any]]:
        card = self

        def workspace_edit(
            path: str, old_string: str, new_string: str, replace_all: bool = False
        ) -> str:
            """Replace old_string with new_string in a file.

            old_string must identify one place (include surrounding lines to make it unique)
            unless replace_all is true. Small whitespace or indentation differences are
            tolerated; an ambiguous match is refused, naming the candidate lines. Refused if
            the file changed since you last read it.
            """
            return card._mutate(
                EditFile(
                    op="edit",
                    path=path,
                    edits=[
                        EditItem(
                            old_string=old_string, new_string=new_string, replace_all=replace_all
                        )
                    ],
                )
            )

        return [workspace_edit]

    def _workspace_multi_edit_fn(self, param: WorkspaceMultiEdit) -> list[Callable[..., Any]]:
        card = self

        def workspace_multi_edit(path: str, edits: list[EditItem]) -> str:
            try:
                items = _EDITS.validate_python(edits)
            except ValidationError as exc:
                problem = exc.errors()[0]["msg"]
                raise RetriableError(
                    f"edits must be a list of {{old_string, new_string, replace_all}}: {problem}"
                ) from None
            return card._mutate(EditFile(op="multi_edit", path=path, edits=items))

        workspace_multi_edit.__doc__ = (  # names its sibling as the model calls it
            "Apply several edits to one file, in order, all or nothing.\n\n"
            "Each edit has old_string, new_string and optionally replace_all, as in\n"
            f"{self.called_as('workspace_edit')}; each applies to the result of the previous "
            "one. If one fails,\nnone is applied."
        )
        return [workspace_multi_edit]

    def _workspace_patch_fn(self, param: WorkspacePatch) -> list[Callable[..., Any]]:
        card = self

        def workspace_patch(patch: str) -> str:
            """Apply a unified diff ('--- a/path', '+++ b/path', '@@ -l,n +l,n @@' hunks) to
            one or more files, all or nothing.

            Every hunk's context and removed lines must be what the file holds now (use
            '--- /dev/null' to create a file, '+++ /dev/null' to delete one).
            """
            return card._mutate(PatchFiles(patch=patch))

        return [workspace_patch]

    def _workspace_delete_fn(self, param: WorkspaceDelete) -> list[Callable[..., Any]]:
        card = self

        def workspace_delete(path: str, recursive: bool = False) -> str:
            """Delete a file, or a directory (recursive=true when it is not empty).

            Refused if a file you read changed since.
            """
            return card._mutate(DeleteFile(path=path, recursive=recursive))

        return [workspace_delete]

    def _workspace_mkdir_fn(self, param: WorkspaceMkdir) -> list[Callable[..., Any]]:
        card = self

        def workspace_mkdir(path: str) -> str:
            """Create a directory (and any missing parents)."""
            return card._mutate(MakeDir(path=path))

        return [workspace_mkdir]

    # -- exec -------------------------------------------------------------------------------------
    def _workspace_exec_fn(
        self, param: WorkspaceExec, channel: Channels = TOOL_CALL
    ) -> list[Callable[..., Any]]:
        """``workspace_exec`` and ``workspace_exec_result`` for whoever is on ``channel``:
        their docstrings and answers name the model's call or the person's ``/command``."""
        card, budget, allowed = self, param.budget(), param.allowlist()
        poll_delay, result_tool = param.poll_delay_seconds, self.called_as(RESULT_TOOL)

        def workspace_exec(command: RestOfLine) -> str:
            try:
                validate_command(command, allowed)
            except CommandRefusedError as exc:
                # never clipped: the refusal's own quotes of the command are excerpts, and
                # the allowlist it names is what the model must learn (all of it)
                raise RetriableError(f"The command was not run: {exc}") from None
            observer, _, actor, identity = card._wired()
            run: ExecRun = ask_tool_actor(
                observer,
                actor,
                WorkspaceActor,
                lambda a: a.exec_start(
                    identity, command, budget, card.git_journal, channel, result_tool
                ),
                what=card.invocation("workspace_exec", channel),
                label=f"The workspace ({card.workspace.actor_name})",
                timeout=ASK_TIMEOUT,
            )
            book = RunBook(card.workspace.index_dir)
            if budget.poll_attempts == 0:
                return (
                    f"Started (run id {run.run_id}). Ask for the outcome with "
                    f"{result_call(run.run_id, channel, result_tool)}."
                )

            def stop() -> None:  # the turn was interrupted: the command must not run on
                observer.proxy_tell(actor, WorkspaceActor).exec_stop(run.run_id)

            with on_cancel(stop):
                final = wait_run(book, run.run_id, budget.wait_seconds())
            return render_run(final if final is not None else run, channel, result_tool)

        workspace_exec.__doc__ = (
            "Run a command line in the sandbox, the workspace as its working directory.\n\n"
            "Programs may be chained with |, &&, || and ; and output redirected with > —\n"
            "only programs on the allowlist may run. The sandbox has no network and only\n"
            "the workspace is writable. Answers the exit code and the output (cut in the\n"
            "middle when long); a command killed at its time budget answers exit_code 124.\n"
            "If it is still running when the wait ends, you get a run id for\n"
            f"{card.invocation(RESULT_TOOL, channel)}."
        )

        def workspace_exec_result(run_id: str) -> str:
            book = RunBook(card.workspace.index_dir)
            run = book.load(run_id.strip())
            if run is None:
                raise RetriableError(
                    f"There is no run {excerpt(run_id)} in this workspace; check the id."
                )
            if not run.done:
                run = wait_run(book, run.run_id, poll_delay) or run
            return render_run(run, channel, result_tool)

        workspace_exec_result.__doc__ = (
            f"The outcome of a command started by {card.invocation('workspace_exec', channel)}, "
            "by its run id."
        )
        return [workspace_exec, attach_param(workspace_exec_result, param)]


def _size(fs: Filesystem, real: Path) -> int:
    """The size of the file ``real``, its folder reached by :meth:`Filesystem.open_dir`."""
    folder = fs.open_dir(real.parent)
    try:
        return os.stat(real.name, dir_fd=folder, follow_symlinks=False).st_size
    finally:
        os.close(folder)


_NOT_UTF8 = "(its name is not UTF-8 text: no tool can reach it; rename it with a command)"


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    is_dir: bool
    is_link: bool
    size: int


def _entries(fs: Filesystem, folder: Path) -> list[_Entry]:
    """What ``folder`` holds, folders first, each as it is (links unfollowed), read through
    the folder's descriptor (:meth:`Filesystem.open_dir`): a folder swapped for a link since
    the path rule looked is an escape, never a listing of what the link points to."""
    fd = fs.open_dir(folder)
    try:
        entries = []
        with os.scandir(fd) as scan:
            for entry in scan:
                if is_staging_name(entry.name):
                    continue
                is_link = entry.is_symlink()
                is_dir = not is_link and entry.is_dir(follow_symlinks=False)
                try:
                    size = 0 if is_dir else entry.stat(follow_symlinks=False).st_size
                except OSError:
                    size = 0
                entries.append(_Entry(entry.name, is_dir, is_link, size))
    finally:
        os.close(fd)
    return sorted(entries, key=lambda e: (not e.is_dir, e.name))


def _list_into(
    fs: Filesystem,
    folder: Path,
    entries: list[_Entry],
    indent: str,
    depth: int,
    lines: list[str],
    cap: int,
) -> None:
    root = fs.root
    for entry in entries:
        if len(lines) >= cap:
            return
        if not utf8_name(entry.name):  # the path rule refuses it: said, never entered
            shown = os.fsencode(entry.name).decode("utf-8", errors="replace")
            lines.append(f"{indent}{shown}{'/' if entry.is_dir else ''} {_NOT_UTF8}")
            continue
        if entry.is_link:
            try:
                target = Path((folder / entry.name).resolve())
            except (OSError, RuntimeError):  # a loop: RuntimeError before Python 3.13
                lines.append(f"{indent}{entry.name} -> (a symlink loop: unreachable)")
                continue
            inside = target == root or target.is_relative_to(root)
            lines.append(
                f"{indent}{entry.name} -> {'(inside)' if inside else '(outside: unreachable)'}"
            )
            continue
        if entry.is_dir:
            lines.append(f"{indent}{entry.name}/")
            if depth > 1:
                try:
                    inner = _entries(fs, folder / entry.name)
                except OSError:
                    continue
                _list_into(fs, folder / entry.name, inner, indent + "  ", depth - 1, lines, cap)
        else:
            lines.append(f"{indent}{entry.name} ({counted(entry.size, 'byte')})")
