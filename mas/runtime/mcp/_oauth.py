"""OAuth 2.1 for HTTP MCP servers: an infra entry's ``auth:`` on the MCP SDK's own providers.

The SDK's httpx2 ``Auth`` classes (``mcp.client.auth``) carry the protocol: protected resource
and authorization server discovery with the 2025-03-26 fallbacks, scope selection from
``WWW-Authenticate`` and ``scopes_supported``, dynamic registration or a client ID metadata
document, PKCE, the ``resource`` parameter and its check, token requests, refresh and step-up on
``insufficient_scope``. This module only chooses one provider from the configuration, resolves its
``env:VAR`` secrets, keeps its tokens in a file outside the repository, brings a person to the
authorization page (and receives the one redirect on 127.0.0.1), and does the one leg the SDK
leaves to the application: the identity provider's token exchange for cross-app access.

Every secret it sees (client secrets, keys, ID tokens, access and refresh tokens) goes to the
provider's ``on_secret`` so it is blanked out of every message, log line and result.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import inspect
import json
import logging
import os
import secrets
import socket
import stat
import sys
import tempfile
import time
import warnings
import webbrowser
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import platformdirs
from mcp.client.auth import OAuthClientProvider, OAuthFlowError, OAuthTokenError
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    handle_protected_resource_response,
    issuers_match,
)
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url
from pydantic import ValidationError

from mas.runtime.config import MCPServerConfig, OAuthConfig
from mas.runtime.mcp._convert import ToolServerError
from mas.runtime.mcp._http_limits import ACCEPT_ENCODING, HttpState, limit_responses
from mas.runtime.mcp._stdio import StdioLimits

__all__ = [
    "TOKEN_DIR_ENV",
    "AuthorizeCallback",
    "NoPersonError",
    "TokenStore",
    "build_auth",
    "token_dir",
    "token_store_path",
]

logger = logging.getLogger("mas.runtime.mcp_provider")

#: Where token files live instead of the user cache folder (tests, CI, a shared runner).
TOKEN_DIR_ENV = "TOOLGEN_TOKEN_DIR"
#: Called with the authorization URL when a server needs a person to sign in (sync or async).
AuthorizeCallback = Callable[[str], Awaitable[None] | None]
#: Lifts the provider's connect deadline while a person is signing in.
PersonWait = Callable[[], AbstractContextManager[None]]

_ENV_PREFIX = "env:"
_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
_ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
_ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
_HTTP_TIMEOUT = 30.0
#: How long a token file change waits for another process holding the token folder's lock.
_STORE_LOCK_SECONDS = 10.0

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks; writes stay atomic
    fcntl = None  # type: ignore[assignment]


class NoPersonError(OAuthFlowError):
    """The authorization code flow needs a person, and this process has no way to reach one."""


class _QuietNoPerson(logging.Filter):
    """Drop the SDK's traceback-carrying "OAuth flow error" record for :class:`NoPersonError`:
    the provider reports that failure itself, as its one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], NoPersonError))


logging.getLogger("mcp.client.auth.oauth2").addFilter(_QuietNoPerson())


def token_dir() -> Path:
    """The folder of token files: ``$TOOLGEN_TOKEN_DIR``, else the user cache folder's ``toolgen/oauth``."""
    override = os.environ.get(TOKEN_DIR_ENV)
    return Path(override) if override else Path(platformdirs.user_cache_dir("toolgen")) / "oauth"


def token_store_path(config: MCPServerConfig) -> Path | None:
    """The token file of one server entry, or None for ``token_store: memory``.

    Named by a hash of what the tokens are good for (server URL, grant, client), so changing any of
    them starts afresh instead of sending one server's tokens to another.
    """
    auth = config.auth
    if auth is None or auth.token_store == "memory":
        return None
    key = json.dumps([config.url, auth.grant, auth.client_id, auth.client_metadata_url, auth.issuer])
    return token_dir() / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


#: A token file is a few KiB; one larger than this is not read.
_MAX_STORE_BYTES = 1024 * 1024


class UntrustedTokenFolder(OAuthFlowError):
    """The token folder is not this user's alone: a planted file there could redirect secrets."""


def _untrusted(info: os.stat_result, *, want_dir: bool) -> str | None:
    """Why a token folder or file is not this user's alone, or None."""
    if want_dir != stat.S_ISDIR(info.st_mode) or (not want_dir and not stat.S_ISREG(info.st_mode)):
        return "not a folder" if want_dir else "not a plain file"
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"owned by uid {info.st_uid}, not {os.getuid()}"
    if info.st_mode & 0o022:  # group or others could plant or change it
        return f"mode {stat.S_IMODE(info.st_mode):04o}: others may write to it"
    return None


def _check_folder(folder: Path) -> None:
    """Refuse a token folder that is a symlink, not ours, or open to others (``TOOLGEN_TOKEN_DIR``
    on a shared runner): anyone who can write there could plant a token file naming their own
    token endpoint, which would then receive the client secret at the next refresh."""
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return
    problem = "a symlink" if stat.S_ISLNK(info.st_mode) else _untrusted(info, want_dir=True)
    if problem:
        raise UntrustedTokenFolder(
            f"the token folder {folder} is {problem}; use a folder only this user can read and write "
            f"(mode 0700), or unset {TOKEN_DIR_ENV}"
        )


class TokenStore:
    """The SDK's ``TokenStorage`` over one JSON file (mode 0600, folder 0700) or memory.

    Besides tokens and the client registration it keeps the absolute expiry and the discovered
    metadata, so a later process refreshes an expired token at the right endpoint instead of
    sending a person through the browser again.
    """

    def __init__(self, path: Path | None, on_secret: Callable[[str], None]) -> None:
        self.path = path
        self._on_secret = on_secret
        self._data: dict[str, Any] = self._read()

    def _read(self) -> dict[str, Any]:
        if self.path is None:
            return {}
        _check_folder(self.path.parent)
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            return {}
        except OSError as exc:  # a symlink (ELOOP) among them: never followed
            logger.warning("token store %s is not a plain file (%s); starting afresh", self.path, type(exc).__name__)
            return {}
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            untrusted = _untrusted(info, want_dir=False)
            if untrusted:
                # Planted or loosened: its metadata could name any token endpoint, so nothing in it is used.
                logger.warning("token store %s is not trusted (%s); starting afresh", self.path, untrusted)
                return {}
            try:
                raw = handle.read(_MAX_STORE_BYTES + 1)
                if len(raw) > _MAX_STORE_BYTES:
                    raise ValueError("larger than 1 MiB")
                data = json.loads(raw)
            except (OSError, ValueError) as exc:
                logger.warning("token store %s is unreadable (%s); starting afresh", self.path, type(exc).__name__)
                return {}
        return data if isinstance(data, dict) else {}

    def _write(self) -> None:
        if self.path is None:
            return
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        _check_folder(folder)
        # A fresh name, created exclusively (O_EXCL, never through a symlink), then renamed over the file.
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{self.path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(self._data, handle, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the token folder's lock and start from the file as it is now.

        Other processes (and other providers of this one) share the file: one that refreshed has
        written tokens this copy has never seen, and writing this copy back whole would drop
        them (the next process would need a person). So each change re-reads the file under the
        folder's lock, changes only its own keys and writes it back before the lock is let go.
        """
        if self.path is None:
            yield
            return
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        _check_folder(folder)
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
        try:
            if fcntl is not None:
                deadline = time.monotonic() + _STORE_LOCK_SECONDS
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if time.monotonic() > deadline:  # a stuck process: go on rather than wait forever
                            logger.warning(
                                "token folder %s stayed locked for %.0f s; writing without the lock",
                                folder,
                                _STORE_LOCK_SECONDS,
                            )
                            break
                        time.sleep(0.02)
            self._data = self._read()
            yield
        finally:
            os.close(fd)  # releases the lock

    def _model(self, key: str, model: Any) -> Any:
        raw = self._data.get(key)
        if raw is None:
            return None
        try:
            return model.model_validate(raw)
        except ValidationError:
            return None

    # --- the SDK's TokenStorage ---------------------------------------------------------------
    async def get_tokens(self) -> OAuthToken | None:
        tokens: OAuthToken | None = self._model("tokens", OAuthToken)
        if tokens is None:
            return None
        self._note_tokens(tokens)
        expires_at = self.expires_at
        if expires_at is not None:  # what is left of the lifetime, for providers that count from now
            tokens = tokens.model_copy(update={"expires_in": max(0, int(expires_at - time.time()))})
        return tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._note_tokens(tokens)
        with self._locked():
            self._data["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
            self._data["expires_at"] = None if tokens.expires_in is None else time.time() + int(tokens.expires_in)
            self._write()

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        info: OAuthClientInformationFull | None = self._model("client", OAuthClientInformationFull)
        if info is not None and info.client_secret:
            self._on_secret(info.client_secret)
        return info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if client_info.client_secret:
            self._on_secret(client_info.client_secret)
        with self._locked():
            self._data["client"] = client_info.model_dump(mode="json", exclude_none=True)
            self._write()

    # --- what a restart needs -----------------------------------------------------------------
    @property
    def expires_at(self) -> float | None:
        value = self._data.get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def forget_tokens(self, tried: OAuthToken | None) -> OAuthToken | None:
        """A refresh with ``tried`` failed: forget those tokens, unless the file holds newer ones.

        Another process (or provider) that refreshed first has rotated the refresh token, so this
        one's refresh fails; the tokens it stored are good and are returned for this provider to
        use instead of sending a person through the browser. Only the tokens that failed are
        forgotten, never ones written since.
        """
        with self._locked():
            stored: OAuthToken | None = self._model("tokens", OAuthToken)
            if stored is not None and (tried is None or stored.refresh_token != tried.refresh_token):
                self._note_tokens(stored)
                return stored
            if self._data.pop("tokens", None) is not None:
                self._data.pop("expires_at", None)
                self._write()
        return None

    def metadata(self) -> tuple[OAuthMetadata | None, ProtectedResourceMetadata | None]:
        return self._model("server_metadata", OAuthMetadata), self._model(
            "resource_metadata", ProtectedResourceMetadata
        )

    def remember_metadata(self, server: OAuthMetadata | None, resource: ProtectedResourceMetadata | None) -> None:
        wanted = {
            key: model.model_dump(mode="json", exclude_none=True)
            for key, model in (("server_metadata", server), ("resource_metadata", resource))
            if model is not None
        }
        if all(self._data.get(key) == dumped for key, dumped in wanted.items()):
            return
        with self._locked():
            self._data.update(wanted)
            self._write()

    def registered_redirect_uri(self) -> str | None:
        """The loopback redirect a stored registration was made for (a new port would not match it)."""
        client = self._data.get("client")
        uris = client.get("redirect_uris") if isinstance(client, dict) else None
        return str(uris[0]) if isinstance(uris, list) and uris and _is_loopback(str(uris[0])) else None

    def _note_tokens(self, tokens: OAuthToken) -> None:
        self._on_secret(tokens.access_token)
        if tokens.refresh_token:
            self._on_secret(tokens.refresh_token)


class _Restoring(OAuthClientProvider):
    """The SDK provider, plus what a restart needs: the stored expiry and endpoints.

    The SDK keeps the expiry and the discovered metadata in memory only; without them a new process
    would treat an expired token as valid until a 401 and then start the full flow (a browser for a
    person) instead of refreshing it.
    """

    _store: TokenStore

    def _configured_issuer(self) -> str | None:
        """The infra ``issuer`` (the SDK's client credentials providers keep it as ``_issuer``)."""
        issuer = getattr(self, "_issuer", None)
        return issuer if isinstance(issuer, str) else None

    async def _initialize(self) -> None:
        await super()._initialize()
        ctx = self.context
        ctx.token_expiry_time = self._store.expires_at if ctx.current_tokens is not None else None
        server, resource = self._store.metadata()
        issuer = self._configured_issuer()
        if issuer is not None and (server is None or not issuers_match(str(server.issuer), issuer)):
            # Refreshing without the configured issuer's metadata would send the refresh token and
            # client secret to an endpoint nobody configured (the MCP server's /token): sign in afresh.
            server = None
            if ctx.current_tokens is not None and ctx.current_tokens.refresh_token:
                ctx.clear_tokens()
        if ctx.oauth_metadata is None and server is not None:
            ctx.oauth_metadata = server
        if ctx.protected_resource_metadata is None and resource is not None:
            ctx.protected_resource_metadata = resource

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        await super()._handle_token_response(response)
        self._store.remember_metadata(self.context.oauth_metadata, self.context.protected_resource_metadata)

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        tried = self.context.current_tokens
        refreshed = await super()._handle_refresh_response(response)
        if not refreshed:  # the dead refresh token is not offered again on the next request
            newer = self._store.forget_tokens(tried)
            if newer is not None:  # another process refreshed first (and rotated ours): use its tokens
                logger.debug("the token store holds tokens refreshed elsewhere; using them")
                self.context.current_tokens = newer
                self.context.token_expiry_time = self._store.expires_at
                return True
        return refreshed


class _AuthorizationCode(_Restoring):
    """The SDK's authorization code flow; a pre-registered client replaces registration.

    One 2025-03-26 allowance on top: a server without protected resource metadata whose root
    authorization server metadata names an issuer on the server's own origin but with a path
    (``http://host/oauth``). The SDK expects exactly the origin there and stops; this flow then
    runs once more expecting that same-origin issuer. An issuer on any other origin still stops it.
    """

    def __init__(
        self,
        *args: Any,
        store: TokenStore,
        fixed_client: OAuthClientInformationFull | None,
        issuer: str | None = None,
        person: PersonAuthorizer | None = None,
        **kw: Any,
    ):
        super().__init__(*args, **kw)
        self._store = store
        self._fixed_client = fixed_client
        self._legacy_issuer: str | None = None
        #: The infra ``issuer``: metadata, the person's sign-in and every token request must be its.
        self._issuer = issuer
        self._person = person

    async def _initialize(self) -> None:
        await super()._initialize()
        if self._fixed_client is not None:
            self.context.client_info = self._fixed_client

    def _select_authorization_server(self, advertised: list[str]) -> str:
        if self._issuer is None:
            return super()._select_authorization_server(advertised)
        return next((server for server in advertised if issuers_match(server, self._issuer)), advertised[0])

    def _expected_issuer(self) -> str:
        if self._issuer is not None:  # whatever the server advertises, its metadata must name this issuer
            return self._issuer
        if self.context.auth_server_url is None and self._legacy_issuer is not None:
            return self._legacy_issuer
        return super()._expected_issuer()

    async def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        try:
            for attempt in (1, 2):
                flow = super()._auth_flow(request)
                seen: str | None = None
                try:
                    outgoing = await flow.__anext__()
                    refreshed_on_401 = False
                    while True:
                        response = yield outgoing
                        seen = await self._same_origin_legacy_issuer(outgoing, response) or seen
                        if (
                            outgoing is request
                            and response.status_code == 401
                            and not refreshed_on_401
                            and self.context.can_refresh_token()
                        ):
                            # A token this client still holds for valid was refused (the server's
                            # clock runs ahead, or it was revoked): the refresh token is tried once
                            # before the full flow, which would need a person.
                            refreshed_on_401 = True
                            refresh = yield await self._refresh_token()
                            if await self._handle_refresh_response(refresh):
                                self._add_auth_header(request)
                                response = yield request
                        outgoing = await flow.asend(response)
                except StopAsyncIteration:
                    return
                except OAuthFlowError:
                    if attempt == 2 or seen is None or self._legacy_issuer is not None or self._issuer is not None:
                        raise
                    self._legacy_issuer = seen
                    logger.debug("authorization server issuer %s is on the server's origin; accepting it", seen)
        finally:
            if self._person is not None:  # a flow that failed between redirect and callback
                await self._person.close()

    async def _same_origin_legacy_issuer(self, sent: httpx2.Request, response: httpx2.Response) -> str | None:
        """The issuer of legacy root metadata when it is on the MCP server's origin but not the origin."""
        if self.context.auth_server_url is not None or response.status_code != 200:
            return None
        server = urlsplit(self.context.server_url)
        if sent.url.path != "/.well-known/oauth-authorization-server" or (
            sent.url.scheme,
            sent.url.netloc.decode(),
        ) != (
            server.scheme,
            server.netloc,
        ):
            return None
        try:
            issuer = str(OAuthMetadata.model_validate_json(await response.aread()).issuer)
        except (ValidationError, httpx2.HTTPError):
            return None
        parts = urlsplit(issuer)
        if (parts.scheme, parts.netloc) != (server.scheme, server.netloc) or parts.path in ("", "/"):
            return None
        return issuer


class _ClientCredentials(_Restoring, ClientCredentialsOAuthProvider):
    def __init__(self, *args: Any, store: TokenStore, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._store = store


class _PrivateKeyJWT(_Restoring, PrivateKeyJWTOAuthProvider):
    def __init__(self, *args: Any, store: TokenStore, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._store = store


# --- the person in the authorization code flow ---------------------------------------------------
class LoopbackReceiver:
    """Receives the authorization server's one redirect on a 127.0.0.1 port, then stops listening."""

    def __init__(self, redirect_uri: str) -> None:
        parts = urlsplit(redirect_uri)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.path = parts.path or "/"
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None
        self._server: asyncio.Server | None = None
        #: The ``state`` of the authorization request: only a redirect carrying it ends the sign-in.
        self.state: str | None = None
        #: Requests that carried a code or an error but not this sign-in's state (ignored).
        self.foreign = 0

    async def start(self) -> None:
        self._result = asyncio.get_running_loop().create_future()
        host = "127.0.0.1" if self.host == "localhost" else self.host.strip("[]")
        self._server = await asyncio.start_server(self._serve, host, self.port)

    async def wait(self, timeout: float) -> AuthorizationCodeResult:
        assert self._result is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), timeout)
        except TimeoutError:
            raise OAuthFlowError(f"no authorization arrived at {self.path} within {timeout:g} s") from None
        finally:
            await self.close()

    async def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            await server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = await asyncio.wait_for(reader.readline(), 10)
            while (await asyncio.wait_for(reader.readline(), 10)).strip():
                pass  # the headers say nothing we need
            fields = request_line.decode("latin-1").split()
            target = urlsplit(fields[1]) if len(fields) >= 2 else urlsplit("")
            query = {key: values[0] for key, values in parse_qs(target.query).items()}
            if target.path != self.path or not ({"code", "error"} & query.keys()):
                await self._reply(writer, 404, "Not the authorization redirect.")
                return
            if not _same_state(query.get("state"), self.state):
                # Any local process or web page can reach this port; only the authorization server
                # knows the state, so anything else is ignored and the sign-in goes on.
                self.foreign += 1
                await self._reply(writer, 404, "Not this sign-in.")
                return
            if self._result is not None and not self._result.done():
                if "error" in query:
                    reason = _printable(query.get("error_description", query["error"]))[:200]
                    self._result.set_exception(OAuthFlowError(f"authorization was refused: {reason}"))
                else:
                    self._result.set_result(
                        AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))
                    )
            await self._reply(writer, 200, "Signed in. You can close this window and go back to the terminal.")
        except (OSError, TimeoutError, UnicodeError):
            pass
        finally:
            writer.close()

    @staticmethod
    async def _reply(writer: asyncio.StreamWriter, status: int, text: str) -> None:
        body = f"<!doctype html><title>toolgen</title><p>{text}</p>".encode()
        reason = "OK" if status == 200 else "Not Found"
        head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        writer.write(f"{head}Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        await writer.drain()


def _same_state(got: str | None, expected: str | None) -> bool:
    if got is None or expected is None:
        return got is expected
    return secrets.compare_digest(got.encode(), expected.encode())


def _printable(text: str) -> str:
    """One line of printable characters: no terminal escapes or line breaks from the redirect."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


class PersonAuthorizer:
    """The SDK's redirect and callback handlers: show the person the URL, receive the redirect.

    With an ``authorize`` callback (the public API's), the callback is given the URL. Otherwise
    the URL is printed on stderr and opened in a browser when there is one - but only when a
    terminal is attached: without one (CI, a service) nobody could ever finish, so the flow fails
    at once with one line instead of waiting.
    """

    def __init__(
        self,
        server: str,
        redirect_uri: str,
        timeout: float,
        authorize: AuthorizeCallback | None,
        person_wait: PersonWait,
    ) -> None:
        self.server = server
        self.redirect_uri = redirect_uri
        self.timeout = timeout
        self._authorize = authorize
        self._person_wait = person_wait
        self._receiver: LoopbackReceiver | None = None

    async def redirect(self, authorization_url: str) -> None:
        if self._authorize is None and not _has_terminal():
            raise NoPersonError(
                "signing in needs a person (auth grant authorization_code) and there is no terminal; "
                "sign in once from a terminal to fill the token store, or use `grant: client_credentials` "
                "or a token header in CI"
            )
        receiver = LoopbackReceiver(self.redirect_uri)
        states = parse_qs(urlsplit(authorization_url).query).get("state")
        receiver.state = states[0] if states else None
        await receiver.start()
        self._receiver = receiver
        try:
            if self._authorize is not None:
                with self._person_wait():
                    if inspect.iscoroutinefunction(self._authorize):
                        await self._authorize(authorization_url)
                    else:  # a sync callback may block (a headless browser, a prompt): keep the loop free
                        outcome = await asyncio.to_thread(self._authorize, authorization_url)
                        if isinstance(outcome, Awaitable):
                            await outcome
                return
            _show(f"MCP server {self.server!r}: to sign in, open this URL in a browser:\n  {authorization_url}")
            if _has_browser():
                await asyncio.to_thread(_open_quietly, authorization_url)
        except BaseException:
            await self.close()  # a failed callback must not keep the port: the next sign-in needs it
            raise

    async def close(self) -> None:
        """Stop listening, if a redirect is still awaited (the flow failed or was cancelled)."""
        receiver, self._receiver = self._receiver, None
        if receiver is not None:
            await receiver.close()

    async def callback(self) -> AuthorizationCodeResult:
        receiver, self._receiver = self._receiver, None
        if receiver is None:
            raise OAuthFlowError("the authorization redirect was never started")
        with self._person_wait():
            return await receiver.wait(self.timeout)


def _show(text: str) -> None:
    """Print on stderr, keeping the URL on one line so a person can copy it whole.

    While a CLI shows live progress, rich owns stderr (a ``FileProxy``) and hard-wraps what is
    printed at the terminal's width, which would break the URL; its console prints it unwrapped.
    """
    console = getattr(sys.stderr, "_FileProxy__console", None)
    if console is not None and hasattr(console, "print"):
        console.print(text, soft_wrap=True, markup=False, highlight=False)
    else:
        sys.stderr.write(f"{text}\n")  # one write: a log line from another thread cannot split it
        sys.stderr.flush()


def _has_terminal() -> bool:
    return any(stream is not None and stream.isatty() for stream in (sys.stdin, sys.stderr))


def _has_browser() -> bool:
    # A console browser (lynx, w3m) started without its own terminal would hang this flow.
    if os.environ.get("BROWSER"):
        return True
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _open_quietly(url: str) -> None:
    try:
        webbrowser.open(url)
    except Exception as exc:  # no browser after all: the printed URL still works
        logger.debug("could not open a browser: %s", type(exc).__name__)


def _is_loopback(uri: str) -> bool:
    parts = urlsplit(uri)
    return parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")


def _free_loopback_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- configuration -> SDK provider ------------------------------------------------------------------
def _resolve(server: str, key: str, value: str | None, on_secret: Callable[[str], None], *, secret: bool) -> str | None:
    """An ``env:VAR`` value from the environment (a missing one names the variable, never a value)."""
    if value is None or not value.startswith(_ENV_PREFIX):
        return value
    var = value[len(_ENV_PREFIX) :]
    resolved = os.environ.get(var)
    if not resolved:
        raise ToolServerError(server, f"auth.{key} needs environment variable {var}, which is not set (or empty)")
    if secret:
        on_secret(resolved)
    return resolved


def _private_key(server: str, auth: OAuthConfig, on_secret: Callable[[str], None]) -> str | None:
    """The PEM signing key of ``private_key_jwt`` (from ``env:VAR`` or a file), or None."""
    if auth.private_key_file is not None:
        try:
            key: str | None = Path(auth.private_key_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise ToolServerError(server, f"auth.private_key_file cannot be read: {type(exc).__name__}") from None
    else:
        key = _resolve(server, "private_key", auth.private_key, on_secret, secret=True)
    if key is not None:
        on_secret(key)
        for line in key.splitlines():  # a message quoting one line of the key is blanked too
            if len(line) >= 16:
                on_secret(line)
    return key


async def build_auth(
    config: MCPServerConfig,
    *,
    on_secret: Callable[[str], None],
    authorize: AuthorizeCallback | None = None,
    person_wait: PersonWait = nullcontext,
) -> httpx2.Auth | None:
    """The httpx2 ``Auth`` for ``config.auth`` (None when the entry has no ``auth:``)."""
    auth = config.auth
    if auth is None or config.url is None:
        return None
    name, url = config.name, config.url
    store = TokenStore(token_store_path(config), on_secret)
    client_id = _resolve(name, "client_id", auth.client_id, on_secret, secret=False)
    client_secret = _resolve(name, "client_secret", auth.client_secret, on_secret, secret=True)

    if auth.grant == "client_credentials":
        return _client_credentials(config, store, client_id, client_secret, on_secret)

    if auth.grant == "token_exchange":
        assert client_id is not None and client_secret is not None
        issuer = auth.issuer or await _discover_issuer(config)
        exchange = _IdentityProviderExchange(config, on_secret)
        method = auth.token_endpoint_auth_method or "client_secret_basic"
        if method not in ("client_secret_basic", "client_secret_post"):
            raise OAuthFlowError(f"token exchange authenticates with client_secret_basic or _post, not {method}")
        return IdentityAssertionOAuthProvider(
            url,
            store,
            client_id,
            client_secret,
            issuer,
            exchange.id_jag,
            token_endpoint_auth_method=method,  # type: ignore[arg-type]
        )

    return _authorization_code(config, store, client_id, client_secret, authorize, person_wait)


def _client_credentials(
    config: MCPServerConfig,
    store: TokenStore,
    client_id: str | None,
    client_secret: str | None,
    on_secret: Callable[[str], None],
) -> httpx2.Auth:
    """``grant: client_credentials``: a signed JWT when a private key is set, else the client secret."""
    auth, name, url = config.auth, config.name, config.url
    assert auth is not None and url is not None and client_id is not None  # the schema requires them
    with warnings.catch_warnings():
        # Without `issuer` the SDK warns (once, with a stack); docs/infra.md recommends setting it.
        warnings.simplefilter("ignore")
        key = _private_key(name, auth, on_secret)
        if key is not None:
            params = SignedJWTParameters(
                issuer=client_id, subject=client_id, signing_key=key, signing_algorithm=auth.signing_algorithm
            )
            return _PrivateKeyJWT(
                url, store, client_id, params.create_assertion_provider(), issuer=auth.issuer, store=store
            )
        method = auth.token_endpoint_auth_method or "client_secret_basic"
        if method not in ("client_secret_basic", "client_secret_post"):
            raise OAuthFlowError(f"client credentials with a secret use client_secret_basic or _post, not {method}")
        assert client_secret is not None
        return _ClientCredentials(
            url,
            store,
            client_id,
            client_secret,
            method,
            issuer=auth.issuer,
            store=store,
        )


def _authorization_code(
    config: MCPServerConfig,
    store: TokenStore,
    client_id: str | None,
    client_secret: str | None,
    authorize: AuthorizeCallback | None,
    person_wait: PersonWait,
) -> httpx2.Auth:
    """``grant: authorization_code``: a person signs in once; refresh tokens keep it going."""
    auth, name, url = config.auth, config.name, config.url
    assert auth is not None and url is not None
    redirect_uri = auth.redirect_uri or store.registered_redirect_uri()
    if redirect_uri is None:
        redirect_uri = f"http://127.0.0.1:{_free_loopback_port()}/callback"
    fixed_client = None
    if client_id is not None:
        fixed_client = OAuthClientInformationFull(
            client_id=client_id,
            client_secret=client_secret,
            redirect_uris=[redirect_uri],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method=auth.token_endpoint_auth_method
            or ("client_secret_basic" if client_secret else "none"),
        )
    person = PersonAuthorizer(name, redirect_uri, auth.authorize_timeout_seconds, authorize, person_wait)
    metadata = OAuthClientMetadata(
        client_name=auth.client_name,
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method=auth.token_endpoint_auth_method,  # type: ignore[arg-type]
    )
    return _AuthorizationCode(
        url,
        metadata,
        store,
        person.redirect,
        person.callback,
        client_metadata_url=auth.client_metadata_url,
        store=store,
        fixed_client=fixed_client,
        issuer=auth.issuer,
        person=person,
    )


class _OneRequest(HttpState):
    """The limits' state for a request of this module's own: the refusal is its error, no warning."""

    def trip(self, reason: str) -> None:
        self.fault = reason


def _refusal(exc: httpx2.StreamError) -> str:
    return str(exc).removesuffix("; the connection is replaced")


def _bounded_client(config: MCPServerConfig) -> httpx2.AsyncClient:
    """An HTTP client for the requests this module sends itself, bounded as the MCP connection's:
    every body within ``max_result_bytes`` and ``max_json_depth`` (gzip inflated in bounded
    pieces; ``mas/runtime/mcp/_http_limits.py``), each request within the HTTP timeout."""
    limits = StdioLimits(max_message_bytes=config.max_result_bytes, max_json_depth=config.max_json_depth)
    return httpx2.AsyncClient(
        timeout=_HTTP_TIMEOUT,
        headers={"Accept-Encoding": ACCEPT_ENCODING},
        event_hooks={"response": [limit_responses(_OneRequest(config.name), limits)]},
    )


async def _discover_issuer(config: MCPServerConfig) -> str:
    """The authorization server a resource names in its protected resource metadata (RFC 9728).

    Used for cross-app access when ``issuer`` is not configured. The metadata's ``resource`` must
    match the server, as in the SDK's own discovery.
    """
    server_url = config.url or ""
    async with _bounded_client(config) as client:
        for url in build_protected_resource_metadata_discovery_urls(None, server_url):
            try:
                response = await client.send(create_oauth_metadata_request(url))
                prm = await handle_protected_resource_response(response)
            except httpx2.StreamError as exc:  # over max_result_bytes (AnswerRefused), or cut short
                raise OAuthFlowError(f"protected resource metadata at {url} was refused: {_refusal(exc)}") from None
            if prm is None:
                continue
            expected = resource_url_from_server_url(server_url)
            if prm.resource and not check_resource_allowed(expected, str(prm.resource)):
                raise OAuthFlowError(f"protected resource {prm.resource} does not match expected {expected}")
            if prm.authorization_servers:
                return str(prm.authorization_servers[0])
    raise OAuthFlowError("the server publishes no protected resource metadata naming its authorization server")


class _IdentityProviderExchange:
    """SEP-990 leg 1 (RFC 8693): trade the person's ID token at the identity provider for an ID-JAG.

    The SDK's ``IdentityAssertionOAuthProvider`` does leg 2 and asks for the ID-JAG through this
    callback; obtaining it is deployment-specific there, so this is the standard exchange.
    """

    def __init__(self, config: MCPServerConfig, on_secret: Callable[[str], None]) -> None:
        assert config.auth is not None
        self._config = config
        self._server = config.name
        self._auth = config.auth
        self._on_secret = on_secret

    async def id_jag(self, audience: str, resource: str) -> str:
        auth = self._auth
        assert auth.idp_token_endpoint is not None and auth.idp_client_id is not None
        id_token = _resolve(self._server, "id_token", auth.id_token, self._on_secret, secret=True)
        data = {
            "grant_type": _TOKEN_EXCHANGE,
            "subject_token": id_token or "",
            "subject_token_type": _ID_TOKEN_TYPE,
            "requested_token_type": _ID_JAG_TYPE,
            "audience": audience,
            "resource": resource,
            "client_id": auth.idp_client_id,
        }
        secret = _resolve(self._server, "idp_client_secret", auth.idp_client_secret, self._on_secret, secret=True)
        if secret:
            data["client_secret"] = secret
        try:
            async with _bounded_client(self._config) as client:
                response = await client.post(auth.idp_token_endpoint, data=data)
        except httpx2.StreamError as exc:  # over max_result_bytes (AnswerRefused), or cut short
            raise OAuthTokenError(f"identity provider token exchange answer was refused: {_refusal(exc)}") from None
        try:
            body = response.json()
        except ValueError:
            body = {}
        if response.status_code != 200 or not isinstance(body, dict) or not body.get("access_token"):
            error = body.get("error", "no token") if isinstance(body, dict) else "no token"
            raise OAuthTokenError(f"identity provider token exchange failed (HTTP {response.status_code}: {error})")
        jag = str(body["access_token"])
        self._on_secret(jag)
        return jag
