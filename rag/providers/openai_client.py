"""Clients of the official `openai` SDK for Azure OpenAI and any OpenAI-compatible server (Ollama, vLLM,
llama.cpp's server, a LiteLLM proxy), behind the same `Failover` as Gemini (decision 0008).

Each endpoint is a `Target`: one client and the model names it serves (on Azure, the deployment names), so a
failover may go from a local server to a hosted one whose models are called differently."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import openai

from rag.providers.failover import (
    Endpoint,
    Failover,
    Verdict,
    api_message,
    classify_status,
    endpoint_labels,
    not_an_http_error,
    not_the_api,
)

NO_KEY = "not-needed"  # the SDK wants a key; a local server without one ignores the header


@dataclass(frozen=True, slots=True)
class Models:
    """What one endpoint calls the answer, rewrite and embedding models (Azure: deployment names)."""

    answer: str
    rewrite: str
    embed: str


@dataclass(frozen=True, slots=True)
class Target:
    client: openai.OpenAI
    models: Models


class KeepOrder(random.Random):
    """Endpoints tried in the order configured (a local server first, a hosted one second)."""

    def sample(self, population: Sequence[Any], k: int, **_: Any) -> list[Any]:
        return list(population)[:k]


def classify(exc: Exception) -> tuple[Verdict, str]:
    if isinstance(exc, openai.APITimeoutError):
        return Verdict.NEXT, "timed out"
    if isinstance(exc, openai.APIConnectionError):
        return Verdict.NEXT, f"connection failed ({type(exc.__cause__ or exc).__name__})"
    if isinstance(exc, openai.APIStatusError):  # (never str(exc) of a request: headers may hold the key)
        # The APIs' errors are JSON objects with a message (OpenAI, Azure, Ollama, vLLM alike); a page or a web
        # framework's {"detail": "Not Found"} comes from a proxy or a base URL without its /v1.
        if not (isinstance(exc.body, dict) and "message" in exc.body):
            return not_the_api("OpenAI", exc.status_code)
        return classify_status(exc.status_code), f"HTTP {exc.status_code}{api_message(exc.body.get('message'))}"
    return not_an_http_error(exc)


def openai_targets(api_keys: Sequence[str], base_urls: Sequence[str], models: Models,
                   per_call_timeout: float) -> list[Endpoint[Target]]:
    """One client per (base URL, key); no key at all is fine for a local server. The SDK's retries are off:
    `Failover` decides what is tried next."""
    keys = list(api_keys) or [NO_KEY]
    endpoints = []
    for url, key, label in endpoint_labels("openai", base_urls, len(keys)):
        client = openai.OpenAI(api_key=keys[key], base_url=url, timeout=per_call_timeout, max_retries=0)
        endpoints.append(Endpoint(label, Target(client, models)))
    return endpoints


def azure_targets(endpoints: Sequence[str], api_version: str, api_keys: Sequence[str],
                  token_provider: Callable[[], str] | None, models: Models,
                  per_call_timeout: float) -> list[Endpoint[Target]]:
    """One `AzureOpenAI` client per (resource endpoint, key), or per endpoint with a Microsoft Entra token
    provider. The deployment name is passed as the model, so the SDK calls /openai/deployments/{name}/…"""
    out = []
    if token_provider is not None:
        for url, _, label in endpoint_labels("azure", endpoints, 1):
            client = openai.AzureOpenAI(azure_endpoint=url or "", api_version=api_version,
                                        azure_ad_token_provider=token_provider, timeout=per_call_timeout,
                                        max_retries=0)
            out.append(Endpoint(label.replace("#key1", "#entra"), Target(client, models)))
        return out
    for url, key, label in endpoint_labels("azure", endpoints, len(api_keys)):
        client = openai.AzureOpenAI(azure_endpoint=url or "", api_version=api_version, api_key=api_keys[key],
                                    timeout=per_call_timeout, max_retries=0)
        out.append(Endpoint(label, Target(client, models)))
    return out


def target_failover(endpoints: Sequence[Endpoint[Target]], per_call_timeout: float, in_order: bool = False,
                    rng: random.Random | None = None) -> Failover[Target]:
    return Failover("openai", endpoints, per_call_timeout, classify, KeepOrder() if in_order else rng)


class EntraTokenError(RuntimeError):
    """Microsoft Entra gave no token (a wrong secret, tenant or identity): the next endpoint is tried."""


class EntraTokens:
    """A Microsoft Entra access token for Azure OpenAI from MSAL (installed for Teams already): a client secret
    (an app registration) or the host's managed identity. MSAL caches the token and renews it before it expires;
    the lock keeps concurrent turns from asking for one each."""

    def __init__(self, scope: str, *, tenant_id: str = "", client_id: str = "", client_secret: str = "",
                 authority_host: str = "https://login.microsoftonline.com", managed_identity: bool = False) -> None:
        import msal  # type: ignore[import-untyped]

        self.scope = scope
        self._lock = threading.Lock()
        self._app: Any
        if managed_identity:
            identity = (msal.UserAssignedManagedIdentity(client_id=client_id) if client_id
                        else msal.SystemAssignedManagedIdentity())
            self._app = msal.ManagedIdentityClient(identity, http_client=_requests_session())
        else:
            self._app = msal.ConfidentialClientApplication(
                client_id, client_credential=client_secret,
                authority=f"{authority_host.rstrip('/')}/{tenant_id}")
        self._managed = managed_identity

    def __call__(self) -> str:
        with self._lock:
            if self._managed:  # a resource, not a scope: ".../.default" without its suffix
                result = self._app.acquire_token_for_client(resource=self.scope.removesuffix("/.default"))
            else:
                result = self._app.acquire_token_for_client(scopes=[self.scope])
        token = result.get("access_token") if isinstance(result, dict) else None
        if not token:
            # MSAL's error fields name the problem (bad secret, unknown tenant) and never echo the secret.
            raise EntraTokenError(f"{result.get('error', '?')}: {str(result.get('error_description', ''))[:160]}")
        return str(token)


def _requests_session() -> Any:
    import requests  # MSAL's own dependency

    return requests.Session()
