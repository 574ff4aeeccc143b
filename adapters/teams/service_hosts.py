"""Which hosts a Teams activity's `serviceUrl` may name: the bot posts its answers (and, with credentials, its own
`Authorization: Bearer` token) to that URL, so a forged one is a way to make the bot call any host.

Pure parsing, no SDK import (the settings use it at start-up); the check itself runs through the Agents SDK's host
validator hook (adapters/teams/service_url_policy.py).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud instance-metadata endpoints: a request there can hand out the host's own cloud credentials.
METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata"})
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254",  # AWS, Azure, GCP, Oracle (also link-local)
    "fd00:ec2::254",  # AWS over IPv6 (a unique-local address, not link-local)
    "100.100.100.200",  # Alibaba Cloud
))


def normal_host(host: str) -> str:
    """Lower case, without IPv6 brackets or a trailing dot: the form the rules below compare."""
    return host.strip().strip("[]").rstrip(".").lower()


def address_of(host: str) -> Address | None:
    """The IP address a host literally names, in any spelling the resolver accepts (`2852039166`, `0xa9.254.0251.254`
    and `169.254.43518` are all 169.254.169.254 to getaddrinfo), IPv4-mapped IPv6 unwrapped; None for a name."""
    host = normal_host(host)
    try:
        address: Address = ipaddress.ip_address(host.split("%", 1)[0])  # fe80::1%eth0: the zone does not matter
    except ValueError:
        try:
            address = ipaddress.IPv4Address(socket.inet_aton(host))
        except (OSError, UnicodeError, ValueError):
            return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def never_reason(host: str) -> str | None:
    """Why a host is never a serviceUrl, listed or not: link-local (169.254.0.0/16, fe80::/10) or a metadata
    endpoint. None when it is not one of those."""
    host = normal_host(host)
    if host in METADATA_HOSTS:
        return f"{host} is a cloud metadata endpoint"
    address = address_of(host)
    if address is not None and address in METADATA_ADDRESSES:
        return f"{address} is a cloud metadata address"
    if address is not None and address.is_link_local:
        return f"{address} is a link-local address"
    return None


def is_loopback(host: str) -> bool:
    """`localhost` or a loopback address (not `*.localhost`: a DNS server may answer those with any address)."""
    host = normal_host(host)
    if host == "localhost":
        return True
    address = address_of(host)
    return address is not None and address.is_loopback


def host_of(url: str) -> str | None:
    """The host of an http(s) URL without user info; None for anything else."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host or "@" in parts.netloc:
        return None
    return normal_host(host)


def parse_allow_list(value: str) -> tuple[str, ...]:
    """NAVIBOT_TEAMS_SERVICE_URLS: comma-separated URLs or host names, as normalised hosts. Raises ValueError (one
    line, naming the entry) for an entry that is not a host, or that names a link-local or metadata address."""
    hosts: list[str] = []
    for raw in (e.strip() for e in value.split(",")):
        if not raw:
            continue
        entry = raw
        if "://" not in raw:
            entry_host = normal_host(raw)
            bare_ipv6 = ":" in entry_host and address_of(entry_host) is not None  # fd00:ec2::254, no brackets
            entry = f"https://[{entry_host}]" if bare_ipv6 else f"https://{raw}"
        host = host_of(entry)
        if host is None:
            raise ValueError(f"{entry!r} is not an http(s) URL or a host name")
        if reason := never_reason(host):
            raise ValueError(f"{entry!r} is refused: {reason}; the bot never posts there")
        hosts.append(host)
    return tuple(dict.fromkeys(hosts))


def is_listed(host: str, listed: tuple[str, ...]) -> bool:
    """The host or a subdomain of it is listed (as the SDK's OutboundHostValidator matches its hosts)."""
    host = normal_host(host)
    return any(host == entry or host.endswith("." + entry) for entry in listed)
