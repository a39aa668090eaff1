"""The sample MCP server behind the MCP SDK's own OAuth pieces: an authorization server and a
resource server in one process on 127.0.0.1 (tests only).

    python tests/servers/oauth_server.py --port PORT [--token-lifetime SECONDS] [--grants FILE]
        [--issuer URL] [--any-client] [--record FILE]

The SDK provides discovery metadata, dynamic registration, the authorize and token endpoints
(PKCE, refresh) and bearer checking; this file only adds an in-memory store that approves every
authorization request at once (no login page) and appends each grant it serves to ``--grants``
(one JSON line: grant type, client and the secrets it handed out), so tests can see a refresh
happen and look for every token and client secret in what the client wrote. Tokens are random
per run and short-lived with ``--token-lifetime``.

For attacks on the client (issue 31): ``--issuer URL`` makes the server's protected resource
metadata name another authorization server (another process, another port: another origin);
``--any-client`` approves any client ID and any redirect URI (an authorization server that takes
whatever it is sent); ``--record FILE`` appends one JSON line per HTTP request received (method,
path, and the ``Authorization`` header: a client secret sent with ``client_secret_basic`` shows).

``POST /test/expire-access-tokens`` makes every access token handed out so far expired here at
once, while the refresh tokens stay good: what a client sees when this server's clock runs ahead
of its own (a token it holds for valid is refused) or its tokens were revoked.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    ProviderTokenVerifier,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from mas.samples.mcp_server import SampleState, build_server, tool_definitions

SCOPE = "tools"


class AnyRedirect(OAuthClientInformationFull):
    """A client that accepts whatever redirect URI it is given (``--any-client``)."""

    def validate_redirect_uri(self, redirect_uri: Any) -> Any:
        return redirect_uri


class ApprovingProvider:
    """An ``OAuthAuthorizationServerProvider`` in memory that approves every request."""

    def __init__(self, lifetime: int, grants: Path | None, any_client: bool = False) -> None:
        self.lifetime = lifetime
        self.grants = grants
        self.any_client = any_client
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    def _log(self, grant: str, client_id: str, *issued: str | None) -> None:
        if self.grants is not None:
            line = {"grant": grant, "client_id": client_id, "secrets": [s for s in issued if s]}
            with self.grants.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(line) + "\n")

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if self.any_client and client_id not in self.clients:
            return AnyRedirect(client_id=client_id, redirect_uris=None, token_endpoint_auth_method="none")
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        self._log("register", client_info.client_id, client_info.client_secret)

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 120,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        expires = int(time.time()) + self.lifetime
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(access_token=access, expires_in=self.lifetime, refresh_token=refresh, scope=" ".join(scopes))

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        token = self._issue(authorization_code.client_id, authorization_code.scopes, authorization_code.resource)
        self._log("authorization_code", authorization_code.client_id, token.access_token, token.refresh_token)
        return token

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        token = self._issue(refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource)
        self._log("refresh_token", refresh_token.client_id, token.access_token, token.refresh_token)
        return token

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(getattr(token, "token", ""), None)
        self.refresh.pop(getattr(token, "token", ""), None)


def recording(app: Any, log: Path) -> Any:
    """The ASGI app, with one JSON line appended to ``log`` per HTTP request it receives."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            line = {
                "method": scope["method"],
                "path": scope["path"],
                "authorization": headers.get(b"authorization", b"").decode("latin-1"),
            }
            with log.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(line) + "\n")
        await app(scope, receive, send)

    return wrapped


def expiring(app: Any, provider: ApprovingProvider) -> Any:
    """The ASGI app, plus ``POST /test/expire-access-tokens`` (every access token expires now)."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/test/expire-access-tokens" and scope["method"] == "POST":
            provider.access.clear()
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    return wrapped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token-lifetime", type=int, default=3600)
    parser.add_argument("--grants", type=Path)
    parser.add_argument("--issuer")
    parser.add_argument("--any-client", action="store_true")
    parser.add_argument("--record", type=Path)
    ns = parser.parse_args()
    base = f"http://127.0.0.1:{ns.port}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the SDK's deprecation note on validate_token_resource
        settings = AuthSettings(
            issuer_url=ns.issuer or base,  # type: ignore[arg-type]
            resource_server_url=f"{base}/mcp",  # type: ignore[arg-type]
            client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=[SCOPE]),
            required_scopes=[SCOPE],
            validate_token_resource=True,
        )
    server = build_server(SampleState(tools=tool_definitions(), page_size=3))
    provider = ApprovingProvider(ns.token_lifetime, ns.grants, ns.any_client)
    app = server.streamable_http_app(
        auth=settings, auth_server_provider=provider, token_verifier=ProviderTokenVerifier(provider)
    )

    app = expiring(app, provider)
    if ns.record is not None:
        app = recording(app, ns.record)

    import uvicorn

    print(f"OAuth sample server on {base}/mcp", file=sys.stderr, flush=True)
    uvicorn.run(app, host="127.0.0.1", port=ns.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
