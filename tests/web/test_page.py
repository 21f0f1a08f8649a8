"""The web page end to end: a real browser on the real server, a scripted team.

Create a team from a card, talk to it and see the reply stream in, see the plan and the
graph change without a reload, answer a member's question, interrupt a turn, use the
/commands palette, filter the timeline, reload and find the same page; resume after a
dropped connection, and a server out of reach then back; a narrow screen and the
keyboard alone; a server with a token. No request leaves the server's origin.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

from playwright.sync_api import Page, Route, expect

from akgentic.client import AkgenticClient, RemoteTeam
from akgentic.client.models import HistoryPage
from akgentic.server import ServerSettings
from tests.server import gate_tool
from tests.server.conftest import Served, serve_cards
from tests.server.proxy import DroppingProxy
from tests.web.conftest import STUDIO, TOKEN, Tab

expect.set_options(timeout=30_000)

PLANNED = "[scripted] Planned the research on the page and put the page in the graph, word by word."


def live(page: Page) -> None:
    expect(page.locator("body")).to_have_attribute("data-stream", "live")


def caught_up(page: Page, team: RemoteTeam) -> str:
    """The page's ``data-seq`` once it shows every record the server has logged, read
    the same on two looks in a row: what a reload must rebuild. Records of a turn that
    ended can still be on their way when the page looks done (an interrupted turn's
    tail, on a busy machine), so "what the page shows now" is not yet the log's end."""
    body = page.locator("body")
    last = -1
    for _ in range(50):
        server = team.client.request_json(
            "GET", f"/teams/{team.team_id}/messages", HistoryPage, params={"limit": 1}
        ).last_seq
        expect(body).to_have_attribute("data-seq", str(server))
        if server == last:
            return str(server)
        last = server
    raise AssertionError(f"the team's log kept growing past seq {last}")


def team_id_of(page: Page) -> str:
    found = re.search(r"#/teams/([0-9a-f-]{36})/", page.url)
    assert found, page.url
    return found.group(1)


def show(page: Page, view: str) -> None:
    page.click(f"#tab-{view}")
    expect(page.locator(f"#panel-{view}")).to_be_visible()


def say(page: Page, text: str) -> None:
    page.fill("#message", text)
    page.press("#message", "Enter")
    expect(page.locator("#message")).to_have_value("")


def fits(page: Page) -> None:
    """Nothing sticks out sideways: the page needs no horizontal scrolling."""
    wide = page.evaluate(
        """() => [document.documentElement.scrollWidth, innerWidth,
            [...document.querySelectorAll("body *")]
              .filter((e) => e.getBoundingClientRect().right > innerWidth + 1)
              .map((e) => e.id || e.className || e.tagName).slice(0, 5)]"""
    )
    assert wide[0] <= wide[1], wide


def studio_tab(site: Served, open_tab) -> tuple[RemoteTeam, Tab]:
    """A new studio team, open on its chat in a new tab, its stream live."""
    team = site.client.create_team("studio")
    tab: Tab = open_tab()
    tab.page.goto(f"{site.url}/#/teams/{team.team_id}/chat")
    live(tab.page)
    return team, tab


def views_text(page: Page) -> dict[str, str]:
    """What each view shows, as text (the board and graph drawn from the mirrors)."""
    shown = {}
    for view, selector in [
        ("chat", "#chat-log"),
        ("board", "#board-columns"),
        ("graph", "#graph-list"),
        ("roster", "#roster-body"),
    ]:
        show(page, view)
        shown[view] = page.locator(selector).inner_text()
    return shown


def test_a_team_from_its_card_to_a_reload(site: Served, open_tab, screenshots: Path) -> None:
    tab: Tab = open_tab()
    page = tab.page
    page.goto(site.url)
    # a new team from the server's cards
    expect(page.locator("#new-card option")).to_have_text(["studio"])
    page.fill("#new-name", "Web page")
    page.click("#new-team button[type=submit]")
    expect(page).to_have_url(re.compile(r"#/teams/[0-9a-f-]{36}/chat$"))
    live(page)
    team_id = team_id_of(page)
    listed = page.locator(f"#team-list [data-team='{team_id}']")
    expect(listed).to_contain_text("Web page")
    expect(listed.locator(".badge")).to_have_text("running")
    expect(listed).to_contain_text("ago")

    # a message, and the reply streamed word by word, tool calls inline and collapsed
    say(page, "plan the page")
    expect(page.locator(".msg.human").last).to_contain_text("You → @Lead")
    turn = page.locator(".turn[data-agent='@Lead']").last
    expect(turn).to_have_attribute("data-outcome", "completed")
    text = turn.locator(".text")
    expect(text).to_have_text(PLANNED)
    assert int(text.get_attribute("data-chunks") or 0) == len(PLANNED.split(" "))
    planning = turn.locator("details.tool[data-tool='update_planning']")
    expect(planning.locator(".badge")).to_have_text("success")
    expect(planning.locator(".tool-body")).to_be_hidden()
    planning.locator("summary").click()
    expect(planning.locator(".tool-body")).to_contain_text("Research the page")
    expect(planning.locator(".tool-body")).to_contain_text("created #1")
    planning.locator("summary").click()
    expect(planning.locator(".tool-body")).to_be_hidden()

    # the plan and the graph, changed by the turn: no reload, deltas folded by the page
    show(page, "board")
    todo = page.locator(".column[data-status='todo'] .task")
    expect(todo).to_have_count(1)
    expect(todo).to_contain_text("#1 Research the page")
    expect(todo.locator(".owner")).to_have_text("@Lead")
    doing = page.locator(".column[data-status='in_progress'] .task")
    expect(doing.locator(".owner")).to_have_text("@Helper")
    page.select_option("#board-owner", "@Helper")
    expect(page.locator(".task")).to_have_count(1)
    page.select_option("#board-owner", "")
    page.screenshot(path=str(screenshots / "board.png"))
    show(page, "graph")
    expect(page.locator("#graph-svg .node[data-entity='the page']")).to_be_visible()
    expect(page.locator("#graph-svg .edge text")).to_have_text("describes")
    expect(page.locator("#graph-counts")).to_have_text("2 entities, 1 relation")
    page.fill("#graph-search", "helper")  # an observation of the report
    expect(page.locator("#graph-list li")).to_have_text(["the page report document"])
    expect(page.locator("#graph-svg .node.hit")).to_have_count(1)
    page.locator("#graph-list button").click()
    details = page.locator("#graph-details")
    expect(details).to_contain_text("the page report (document)")
    expect(details).to_contain_text("written by the helper")
    expect(details).to_contain_text("the page report —describes→ the page")
    expect(details).not_to_contain_text("null")
    page.fill("#graph-search", "")
    page.screenshot(path=str(screenshots / "graph.png"))
    for tool in ("%23PlanningTool", "%23KnowledgeGraphTool"):  # one snapshot each
        assert len(tab.asked(f"/state/{tool}")) == 1

    # the roster: role, model, usage, idle now
    show(page, "roster")
    lead = page.locator("#roster-body tr[data-member='@Lead']")
    expect(lead.locator("td").nth(0)).to_have_text("Lead")  # the role
    expect(lead.locator("td").nth(1)).to_have_text("scripted:studio.scenario.yaml")
    expect(lead).to_have_attribute("data-status", "idle")
    expect(lead.locator("td.num").first).to_have_text("3")  # three model requests
    helper = page.locator("#roster-body tr[data-member='@Helper']")
    expect(helper.locator("td").nth(0)).to_have_text("Helper")
    page.screenshot(path=str(screenshots / "roster.png"))

    # a member's question, answered in place
    show(page, "chat")
    say(page, "ask colour")
    question = page.locator(".question-form")
    expect(question).to_contain_text("@Lead asks you: Which colour do you prefer?")
    question.locator("input").fill("blue")
    question.locator("button").click()
    expect(question).to_have_count(0)
    expect(page.locator(".question .answered")).to_have_text("You answered: blue")
    expect(page.locator(".msg.human").last).to_contain_text(
        "answering “Which colour do you prefer?”"
    )
    expect(page.locator(".turn[data-agent='@Lead'] .text").last).to_have_text(
        "[scripted] Noted: blue."
    )

    # interrupt a turn in progress: @Lead waits at the gate until the test opens it
    say(page, "wait for it")
    running = page.locator(".turn[data-agent='@Lead']").last
    expect(running).to_have_attribute("data-outcome", "running")
    assert gate_tool.ENTERED.wait(30)
    show(page, "roster")
    expect(page.locator("#roster-body tr[data-member='@Lead']")).to_have_attribute(
        "data-status", "busy"
    )
    show(page, "chat")
    expect(page.locator("#interrupt")).to_have_text("Interrupt (@Lead)")
    with page.expect_response(lambda r: r.url.endswith("/interrupt")) as answered:
        page.click("#interrupt")
    assert answered.value.status == 202
    gate_tool.OPEN.set()
    expect(running).to_have_attribute("data-outcome", "interrupted")
    expect(running.locator(".who .badge")).to_have_text("interrupted by @Human")
    # whom the interrupt reached stays said while the turn's records stream in
    expect(page.locator("#composer-note")).to_have_text("Interrupt sent to @Lead, @Helper.")
    expect(page.locator(".notice.info").last).to_have_text(
        "@Helper asked to stop its turn (by @Human)"
    )
    expect(page.locator("#interrupt")).to_be_disabled()

    # the /commands palette: what @Lead announced, completed from the keyboard
    page.fill("#message", "")
    page.type("#message", "/")
    palette = page.locator("#palette")
    expect(palette).to_be_visible()
    expect(palette.locator("[data-command='compact']")).to_be_visible()
    expect(palette.locator("[data-command='planning']")).to_be_visible()
    page.screenshot(path=str(screenshots / "chat.png"))
    page.type("#message", "cle")
    expect(palette.locator("[role=option]")).to_have_count(1)
    page.press("#message", "Enter")
    expect(page.locator("#message")).to_have_value("/clear")
    expect(palette).to_be_hidden()
    page.press("#message", "Enter")
    expect(page.locator(".msg.member").last).to_contain_text("Conversation cleared.")
    expect(page.locator(".msg.member .sent.failed")).to_have_count(0)
    say(page, "/nope")  # an unknown command: its answer is marked failed, and shown so
    failed = page.locator(".msg.member").last.locator(".sent.failed")
    expect(failed).to_contain_text("Unknown command /nope")
    expect(failed).to_have_attribute("role", "alert")

    # the timeline, filtered by member and kind
    show(page, "timeline")
    page.select_option("#timeline-kind", "ToolCall")
    expect(page.locator("#timeline-list li")).to_have_count(3)  # planning, graph, gate
    page.select_option("#timeline-kind", "")
    page.select_option("#timeline-member", "@Human")
    kinds = page.locator("#timeline-list li .sender").all_inner_texts()
    assert kinds and set(kinds) == {"@Human"}
    page.select_option("#timeline-member", "")
    page.screenshot(path=str(screenshots / "timeline.png"))

    # a reload rebuilds the same page from the log
    seq = caught_up(page, site.client.get_team(team_id))
    before = views_text(page)
    page.reload()
    live(page)
    expect(page.locator("body")).to_have_attribute("data-seq", seq)
    assert views_text(page) == before
    assert tab.errors == []
    assert tab.foreign(site.url) == []


def test_a_dropped_connection_resumes_from_the_last_event(site: Served, open_tab) -> None:
    port = urlparse(site.url).port
    assert port is not None
    proxy = DroppingProxy(port, cut_after=1 << 40, drops=0)
    try:
        team = site.client.create_team("studio")
        tab: Tab = open_tab()
        page = tab.page
        page.goto(f"{proxy.url}/#/teams/{team.team_id}/chat")
        live(page)
        say(page, "hello")
        expect(page.locator(".turn .text").last).to_have_text("[scripted] Noted: hello.")
        seen = int(page.locator("body").get_attribute("data-seq") or 0)
        assert proxy.cut_open() > 0
        team.send("while you were away")  # straight to the server, not through the proxy
        expect(page.locator(".turn .text").last).to_have_text(
            "[scripted] Noted: while you were away."
        )
        live(page)
        streams = tab.asked(f"/teams/{team.team_id}/events")
        assert len(streams) >= 2
        resumed = streams[-1].headers.get("last-event-id")
        assert resumed is not None and int(resumed) >= seen
        # nothing missed, nothing twice
        expect(page.locator(".msg.human")).to_have_count(2)
        expect(page.locator(".turn")).to_have_count(2)
        assert tab.errors == []
        assert tab.foreign(proxy.url) == []
    finally:
        proxy.close()


def test_a_narrow_screen_and_the_keyboard_alone(site: Served, open_tab, screenshots) -> None:
    team = site.client.create_team("studio")
    tab: Tab = open_tab(width=390, height=844)
    page = tab.page
    page.goto(f"{site.url}/#/teams/{team.team_id}/chat")
    live(page)
    expect(page.locator("#sidebar")).to_be_hidden()  # a drawer on a narrow screen

    # type and send with the keyboard; switch views with the arrow keys
    page.focus("#message")
    page.keyboard.type("plan the page")
    page.keyboard.press("Enter")
    expect(page.locator(".turn .text").last).to_have_text(PLANNED)
    page.focus("#tab-chat")
    page.keyboard.press("ArrowRight")
    expect(page).to_have_url(re.compile(r"/board$"))
    expect(page.locator("#tab-board")).to_be_focused()
    expect(page.locator(".column[data-status='todo'] .task")).to_have_count(1)
    fits(page)
    page.keyboard.press("End")
    expect(page).to_have_url(re.compile(r"/timeline$"))
    page.keyboard.press("Alt+3")
    expect(page).to_have_url(re.compile(r"/graph$"))
    expect(page.locator("#graph-svg .node")).to_have_count(2)
    fits(page)
    page.keyboard.press("Alt+1")
    expect(page.locator("#panel-chat")).to_be_visible()
    fits(page)

    # the palette: open, move, close with the keyboard
    page.focus("#message")
    page.screenshot(path=str(screenshots / "narrow.png"))
    page.keyboard.type("/")
    expect(page.locator("#palette")).to_be_visible()
    page.keyboard.press("ArrowDown")
    expect(page.locator("#palette [aria-selected=true]")).to_have_count(1)
    page.keyboard.press("Escape")
    expect(page.locator("#palette")).to_be_hidden()

    # the team list opens as a drawer, and Escape closes it
    page.focus("#nav-toggle")
    page.keyboard.press("Enter")
    expect(page.locator("#sidebar")).to_be_visible()
    expect(page.locator("#new-card")).to_be_focused()  # the drawer's first field
    expect(page.locator(f"#team-list [data-team='{team.team_id}']")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#sidebar")).to_be_hidden()
    assert tab.errors == []
    assert tab.foreign(site.url) == []


def test_a_server_with_a_token_asks_for_it(guarded_site: Served, open_tab) -> None:
    tab: Tab = open_tab()
    page = tab.page
    page.goto(guarded_site.url)  # the page itself needs no token: it holds no data
    dialog = page.locator("#token-dialog")
    expect(dialog).to_be_visible()
    page.fill("#token-input", TOKEN)
    page.click("#token-form button[type=submit]")
    expect(dialog).to_be_hidden()
    expect(page.locator("#new-card option")).to_have_text(["studio"])
    page.fill("#new-model", "scripted:default")  # every member on the built-in scenario
    page.click("#new-team button[type=submit]")
    live(page)  # the event stream, read with fetch, carries the token too
    say(page, "hello")
    expect(page.locator(".turn .text").last).to_contain_text("offline scripted model")
    sent = tab.asked("/events")[-1].headers.get("authorization")
    assert sent == f"Bearer {TOKEN}"
    with AkgenticClient(guarded_site.url, token=None) as anonymous:
        assert anonymous.request("GET", "/").status_code == 200
    assert tab.errors == []
    assert tab.foreign(guarded_site.url) == []


def test_a_deleted_team_says_so_and_its_stream_is_not_reopened(site: Served, open_tab) -> None:
    team, tab = studio_tab(site, open_tab)
    page = tab.page
    site.client.delete_team(team.team_id)
    expect(page.locator("body")).to_have_attribute("data-stream", "deleted")
    expect(page.locator("#connection")).to_have_text("team deleted")
    expect(page.locator("#team-status")).to_have_text("deleted")
    expect(page.locator("#resume-team")).to_be_hidden()
    expect(page.locator("#message")).to_be_disabled()
    expect(page.locator("#composer-note")).to_have_text("This team is deleted.")  # no resume
    assert len(tab.asked(f"/teams/{team.team_id}/events")) == 1
    assert tab.errors == []


def test_a_team_deleted_while_its_stream_was_down_is_shown_deleted(site: Served, open_tab) -> None:
    """The stream drops, the team is deleted meanwhile: the reconnection's 404 carries the
    server's code team_not_found, so the page says the team is deleted and stops, instead
    of retrying a stream that will never come back."""
    team = site.client.create_team("studio")
    tab: Tab = open_tab()
    page = tab.page
    dropped: list[str] = []

    def first_drops(route: Route) -> None:
        if dropped:
            route.continue_()
            return
        dropped.append(route.request.url)
        site.client.delete_team(team.team_id, purge=True)  # while the page has no stream
        route.abort()

    answered: list[int] = []
    page.on(
        "response",
        lambda response: answered.append(response.status) if "/events" in response.url else None,
    )
    page.route(f"**/teams/{team.team_id}/events*", first_drops)
    page.goto(f"{site.url}/#/teams/{team.team_id}/chat")
    expect(page.locator("body")).to_have_attribute("data-stream", "deleted")
    expect(page.locator("#connection")).to_have_text("team deleted")
    expect(page.locator("#team-status")).to_have_text("deleted")
    assert len(dropped) == 1
    assert len(tab.asked(f"/teams/{team.team_id}/events")) == 2  # the dropped one, the 404
    assert answered == [404]  # the purged team: no record left to say "deleted" on a stream
    assert tab.errors == []


def test_an_error_stays_until_the_person_acts_again(site: Served, open_tab) -> None:
    """The one-line reason of a refused message stays on screen while the page refreshes
    the team list and the roster in the background (their success is no answer to what
    the person did); the person's next action that succeeds clears it."""
    team, tab = studio_tab(site, open_tab)
    page = tab.page
    page.evaluate("() => { document.querySelector('#message').value = 'y'.repeat(200001); }")
    page.press("#message", "Enter")
    flash = page.locator("#flash")
    expect(flash).to_contain_text("the request is not valid: content")
    assert len(page.input_value("#message")) == 200001  # kept, to be shortened
    # the team stopped elsewhere: the page refreshes its status, roster and team list —
    # and a refresh that fails (the roster, here) does not replace the person's reason
    page.route(
        "**/members",
        lambda route: route.fulfill(status=500, json={"detail": "the roster is unreadable"}),
    )
    with page.expect_response(lambda r: r.url.endswith("/members") and r.status == 500):
        team.stop()
    expect(page.locator(f"#team-list [data-team='{team.team_id}'] .badge")).to_have_text("stopped")
    expect(page.locator("#team-status")).to_have_text("stopped")
    expect(flash).to_contain_text("the request is not valid: content")
    page.unroute("**/members")
    page.click("#resume-team")  # an action of the person's own, which succeeds
    expect(page.locator("#team-status")).to_have_text("running")
    expect(flash).to_be_hidden()
    assert tab.errors == []


def direction(page: Page, selector: str) -> str:
    """The direction the browser lays ``selector``'s text out in."""
    return str(page.locator(selector).evaluate("e => e.matches(':dir(rtl)') ? 'rtl' : 'ltr'"))


def test_right_to_left_text_reads_right_to_left(site: Served, open_tab) -> None:
    """Arabic or Hebrew — a team's name, what the person types and says — is laid out
    right to left, each text by its own first strong letter (dir=auto); text that starts
    in a left-to-right script stays left to right."""
    name = "فريق البحث"
    team = site.client.create_team("studio", name=name)
    tab: Tab = open_tab()
    page = tab.page
    page.goto(f"{site.url}/#/teams/{team.team_id}/chat")
    live(page)
    expect(page.locator("#team-name")).to_have_text(name)
    assert direction(page, "#team-name") == "rtl"
    assert direction(page, f"#team-list [data-team='{team.team_id}'] .team-name") == "rtl"
    page.fill("#message", "שלום עולם")
    assert direction(page, "#message") == "rtl"  # typed where a right-to-left reader expects
    page.press("#message", "Enter")
    said = page.locator(".msg.human .text").last
    expect(said).to_have_text("שלום עולם")
    assert direction(page, ".msg.human .text") == "rtl"
    reply = page.locator(".turn[data-agent='@Lead'] .text").last
    expect(reply).to_have_text("[scripted] Noted: שלום עולם.")
    assert direction(page, ".turn[data-agent='@Lead'] .text") == "ltr"  # starts in Latin
    assert tab.errors == []


def test_a_team_created_from_the_keyboard_is_ready_to_talk_to(site: Served, open_tab) -> None:
    """Create a team with the keyboard: the focus lands in its message box (not on the
    form's button, hidden in the drawer on a narrow screen), so typing talks to it."""
    for width in (1280, 390):
        tab: Tab = open_tab(width=width)
        page = tab.page
        page.goto(site.url)
        expect(page.locator("#new-card option")).to_have_text(["studio"])
        if width < 760:
            page.focus("#nav-toggle")
            page.keyboard.press("Enter")  # the drawer, its first field focused
            expect(page.locator("#new-card")).to_be_focused()
        page.focus("#new-team button[type=submit]")
        page.keyboard.press("Enter")
        expect(page).to_have_url(re.compile(r"#/teams/[0-9a-f-]{36}/chat$"))
        live(page)
        expect(page.locator("#message")).to_be_focused()
        page.keyboard.type("hello")
        page.keyboard.press("Enter")
        expect(page.locator(".turn .text").last).to_have_text("[scripted] Noted: hello.")
        assert tab.errors == []


def test_a_server_out_of_reach_is_said_plainly_and_the_page_recovers_by_itself(
    tmp_path: Path, open_tab
) -> None:
    """The server stops under an open team: the page says it cannot reach the server and
    retries (never the browser's "Failed to fetch"), and shows the team's status as
    unknown rather than the "running" it last saw; a server started again on the same
    port brings the real status back without a reload."""
    first = serve_cards(tmp_path, ServerSettings(port=0), cards=(STUDIO,))
    served = next(first)
    port = urlparse(served.url).port
    assert port is not None
    team = served.client.create_team("studio")
    tab: Tab = open_tab()
    page = tab.page
    page.goto(f"{served.url}/#/teams/{team.team_id}/chat")
    live(page)
    badge = page.locator(f"#team-list [data-team='{team.team_id}'] .badge")
    expect(page.locator("#team-status")).to_have_text("running")
    expect(badge).to_have_text("running")

    first.close()  # the server stops (its teams too): the page has no one to ask
    expect(page.locator("#connection")).to_have_text("cannot reach the server — retrying…")
    expect(page.locator("#team-status")).to_have_text("unknown")
    expect(page.locator("body")).to_have_attribute("data-server", "unreachable")
    expect(badge).to_have_text("unknown")
    expect(page.locator("#stop-team")).to_be_hidden()
    assert "Failed to fetch" not in page.locator("body").inner_text()

    again = serve_cards(tmp_path, ServerSettings(port=port), cards=(STUDIO,))
    next(again)
    try:
        expect(page.locator("#team-status")).to_have_text("stopped")  # what it is now
        expect(page.locator("body")).to_have_attribute("data-server", "reachable")
        expect(badge).to_have_text("stopped")
        expect(page.locator("#resume-team")).to_be_visible()
        expect(page.locator("#connection")).not_to_have_text("cannot reach the server — retrying…")
        expect(page.locator("#flash")).to_be_hidden()
        assert "Failed to fetch" not in page.locator("body").inner_text()
        assert tab.errors == []
    finally:
        again.close()


def _held_until(page: Page, held: list[Route], count: int) -> None:
    """Wait (the page's event loop turning) until ``count`` requests are held."""
    for _ in range(600):
        if len(held) >= count:
            return
        page.evaluate("() => new Promise((done) => requestAnimationFrame(done))")
    raise AssertionError(f"{len(held)} request(s) held, not {count}")


def holding_messages(page: Page) -> list[Route]:
    """The messages ``page`` posts from now on, held (not sent on) in the list returned,
    for the test to continue or answer."""
    held: list[Route] = []
    page.route("**/messages", lambda route: held.append(route))
    return held


def test_enter_twice_sends_a_message_once(site: Served, open_tab) -> None:
    """Enter empties the message box at once: a second Enter while the first message is on
    its way sends nothing (the message is said once), and the box is free for the next."""
    _, tab = studio_tab(site, open_tab)
    page = tab.page
    held = holding_messages(page)
    page.fill("#message", "hello")
    page.press("#message", "Enter")
    expect(page.locator("#message")).to_have_value("")  # before the server answered
    page.press("#message", "Enter")
    _held_until(page, held, 1)
    held[0].continue_()
    page.unroute("**/messages")
    expect(page.locator(".turn .text").last).to_have_text("[scripted] Noted: hello.")
    say(page, "after")
    expect(page.locator(".turn .text").last).to_have_text("[scripted] Noted: after.")
    assert page.locator(".msg.human .text").all_inner_texts() == ["hello", "after"]
    assert len(held) == 1
    assert tab.errors == []


def test_a_refused_message_comes_back_before_what_was_typed_since(site: Served, open_tab) -> None:
    """A message the server refuses returns to the box, ahead of what the person began to
    type while it was on its way, with the reason on screen: nothing typed is lost."""
    _, tab = studio_tab(site, open_tab)
    page = tab.page
    held = holding_messages(page)
    say(page, "first")
    page.locator("#message").press_sequentially("second")
    _held_until(page, held, 1)
    held[0].fulfill(status=422, json={"detail": "the request is not valid: content"})
    expect(page.locator("#flash")).to_have_text("the request is not valid: content")
    expect(page.locator("#message")).to_have_value("first\nsecond")
    expect(page.locator(".msg.human")).to_have_count(0)


def test_a_long_word_from_a_member_wraps_in_the_chat(site: Served, open_tab) -> None:
    """A word wider than the chat (a URL, a hash) in what a member sends wraps inside its
    bubble: the conversation never needs scrolling sideways."""
    _, tab = studio_tab(site, open_tab)
    page = tab.page
    word = "x" * 3000
    say(page, f"ask {word}")
    asked = f"Which {word} do you prefer?"
    expect(page.locator(".question-form .question-text")).to_have_text(asked)
    expect(page.locator(".turn .question .question-text")).to_have_text(asked)
    wide = page.evaluate(
        """() => ["#chat-log", "#questions", "#main"].map((s) => document.querySelector(s))
            .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.id)"""
    )
    assert wide == []
    assert tab.errors == []


def test_a_long_team_title_wraps_in_its_heading(site: Served, open_tab) -> None:
    """A title of one long word (the form takes 200 characters) wraps in the team's
    heading, on a wide screen and a narrow one: the page never scrolls sideways."""
    name = "N" * 200
    team = site.client.create_team("studio", name=name)
    for width in (1280, 390):
        tab: Tab = open_tab(width=width)
        page = tab.page
        page.goto(f"{site.url}/#/teams/{team.team_id}/chat")
        live(page)
        expect(page.locator("#team-name")).to_have_text(name)
        fits(page)
        sideways = page.evaluate(
            "() => ['#main', '#team'].map((s) => document.querySelector(s))"
            ".filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.id)"
        )
        assert sideways == []
        assert tab.errors == []


def test_a_double_click_on_stop_or_resume_asks_once(site: Served, open_tab) -> None:
    """Stop and Resume are disabled until the server answered and the status is read
    back: a double click stops or resumes the team once (a second resume is refused by
    the server, and its refusal would flash on screen)."""
    team, tab = studio_tab(site, open_tab)
    page = tab.page
    for verb, status in (("stop", "stopped"), ("resume", "running")):
        with page.expect_response(lambda r, v=verb: f"/{team.team_id}/{v}" in r.url):
            page.dblclick(f"#{verb}-team")
        expect(page.locator("#team-status")).to_have_text(status)
    expect(page.locator("#message")).to_be_enabled()
    assert [len(tab.asked(f"/{team.team_id}/{verb}")) for verb in ("stop", "resume")] == [1, 1]
    expect(page.locator("#flash")).to_be_hidden()
    assert tab.errors == []


def test_stop_and_resume_from_the_keyboard_keep_the_focus(site: Served, open_tab) -> None:
    """Stop pressed with the keyboard hides itself: the focus goes to Resume; Resume
    pressed hides itself: the focus goes to the message box, ready to talk again."""
    _, tab = studio_tab(site, open_tab)
    page = tab.page
    page.focus("#stop-team")
    page.keyboard.press("Enter")
    expect(page.locator("#team-status")).to_have_text("stopped")
    expect(page.locator("#resume-team")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#team-status")).to_have_text("running")
    expect(page.locator("#message")).to_be_focused()
    page.keyboard.type("back")
    page.keyboard.press("Enter")
    expect(page.locator(".turn .text").last).to_have_text("[scripted] Noted: back.")
    assert tab.errors == []


def test_a_message_between_agents_shows_its_hop_and_the_team_s_bound(
    site: Served, open_tab
) -> None:
    """@Lead asks @Helper (hop 1), @Helper answers (hop 2), @Lead tells the person (no hop
    shown: the person's messages start the count again)."""
    _, tab = studio_tab(site, open_tab)
    page = tab.page
    say(page, "tell the helper hello")
    asked = page.locator(".turn[data-agent='@Lead'] .sent").first
    expect(asked).to_contain_text("→ @Helper (request): hello")
    expect(asked.locator(".hops")).to_have_text("hop 1/30")
    helper = page.locator(".turn[data-agent='@Helper']").last
    expect(helper).to_have_attribute("data-outcome", "completed")
    expect(helper.locator(".who")).to_contain_text("→ @Lead")
    expect(helper.locator(".who .hops")).to_have_text("hop 2/30")
    told = page.locator(".turn[data-agent='@Lead'] .sent").last
    expect(told).to_contain_text("→ @Human (notification): The helper answered.")
    expect(told.locator(".hops")).to_have_count(0)
    assert tab.errors == []
