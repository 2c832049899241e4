"""The sync set's key and the sealed files that carry changes through the folder.

The pairing code is the key: 130 random bits written as 26 characters of Crockford's
base32, typed on the other device. HKDF turns it into the AES-GCM key and into the set's
public id (written in the folder, so joining the wrong folder is told at once). Each file
is a header in clear (the set, the device, its number, the devices it had seen) followed
by the compressed changes, sealed with AES-GCM with the header as associated data: the
folder's provider reads nothing, and a changed byte anywhere makes the file refused.
"""

from __future__ import annotations

import json
import os
import secrets
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from core.errors import CodedError, ErrorCode
from core.i18n import N_

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford's: no I, L, O, U
CODE_LENGTH = 26
MAGIC = b"TMSYNC\x01\n"
NONCE = 12
MAX_HEADER = 1 << 16
MAX_INFLATED = 1 << 30  # what a file may hold once decompressed


class SealError(CodedError):
    """A file that is not a sound file of this sync set."""

    code = ErrorCode.INVALID


def new_code() -> str:
    """A fresh pairing code, in groups of four or five for reading aloud and typing."""
    raw = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
    return "-".join(raw[i:i + 5] for i in range(0, CODE_LENGTH, 5))


def normalize_code(code: str) -> str:
    """The code as typed, any case, spaces or dashes, O for 0 and I or L for 1."""
    cleaned = "".join(code.upper().split()).replace("-", "")
    cleaned = cleaned.translate(str.maketrans({"O": "0", "I": "1", "L": "1"}))
    if len(cleaned) != CODE_LENGTH or any(ch not in ALPHABET for ch in cleaned):
        raise SealError(N_("a pairing code is {length} letters and digits (as shown on the "
                           "first device); this one is not"), length=CODE_LENGTH)
    return cleaned


@dataclass(frozen=True)
class SetKey:
    key: bytes
    set_id: str

    @classmethod
    def from_code(cls, code: str) -> SetKey:
        material = normalize_code(code).encode()

        def derive(purpose: bytes) -> bytes:
            return HKDF(hashes.SHA256(), 32, b"trulymem-sync", purpose).derive(material)

        return cls(derive(b"changes key"), derive(b"set id")[:8].hex())


SIGNATURE = 64


def new_signing_key() -> str:
    """A device's own signing key (hex): its files are signed with it, so a paired device
    cannot write in another's name."""
    return Ed25519PrivateKey.generate().private_bytes_raw().hex()


def public_key(signing_key: str) -> str:
    private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(signing_key))
    return private.public_key().public_bytes_raw().hex()


def seal(key: SetKey, header: dict[str, Any], payload: dict[str, Any],
         signing_key: str) -> bytes:
    """The sealed file: the header (naming the signer's public key), the encrypted
    changes, and the device's signature of both. The changes are one JSON line each
    (the header says `lines`), so a device reads and applies them a piece at a time."""
    head = MAGIC + _header_bytes({**header, "pub": public_key(signing_key), "lines": 1})
    rows = [{k: v for k, v in payload.items() if k != "changes"},
            *payload.get("changes", [])]
    body = zlib.compress(b"\n".join(json.dumps(row, ensure_ascii=False, separators=(
        ",", ":")).encode() for row in rows), 6)
    nonce = os.urandom(NONCE)
    sealed = head + nonce + AESGCM(key.key).encrypt(nonce, body, head)
    private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(signing_key))
    return sealed + private.sign(sealed)


def _header_bytes(header: dict[str, Any]) -> bytes:
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    return struct.pack(">I", len(text)) + text


def read_header(data: bytes) -> tuple[dict[str, Any], int]:
    """The header in clear and where the sealed part starts; SealError when the bytes
    are not a sync file at all."""
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 4:
        raise SealError(N_("not a TrulyMEM sync file"))
    (length,) = struct.unpack(">I", data[len(MAGIC):len(MAGIC) + 4])
    start = len(MAGIC) + 4
    if length > MAX_HEADER or start + length + NONCE + 16 + SIGNATURE > len(data):
        raise SealError(N_("the file is cut short"))
    try:
        header = json.loads(data[start:start + length])
    except ValueError:
        raise SealError(N_("the file's header is damaged")) from None
    if not isinstance(header, dict):
        raise SealError(N_("the file's header is damaged"))
    return header, start + length


def peek_header(data: bytes) -> dict[str, Any]:
    """The header in clear of a file's first bytes (`folder.read_head`), unchecked: for
    a device looking at its own files, never for applying one."""
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 4:
        raise SealError(N_("not a TrulyMEM sync file"))
    (length,) = struct.unpack(">I", data[len(MAGIC):len(MAGIC) + 4])
    try:
        header = json.loads(data[len(MAGIC) + 4:len(MAGIC) + 4 + length])
    except ValueError:
        raise SealError(N_("the file's header is damaged")) from None
    if not isinstance(header, dict):
        raise SealError(N_("the file's header is damaged"))
    return header


def unseal(key: SetKey, data: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """(header, payload) of a file sealed with `key` and signed by the key its header
    names (the caller checks that key is the device's); SealError when it was not, or
    when any byte changed since (a cut, a flipped bit, a header edited to name another
    device)."""
    header, sealed_from = read_header(data)
    nonce = data[sealed_from:sealed_from + NONCE]
    signed, signature = data[:-SIGNATURE], data[-SIGNATURE:]
    try:
        body = AESGCM(key.key).decrypt(nonce, signed[sealed_from + NONCE:],
                                       data[:sealed_from])
    except InvalidTag:
        raise SealError(N_("the file does not open with this sync set's key: it was "
                           "changed, cut short, or written by a device that is not "
                           "paired")) from None
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(str(header.get("pub")))).verify(
            signature, signed)
    except (ValueError, InvalidSignature):
        raise SealError(N_("the file's signature does not match the device it names"))\
            from None
    if header.get("lines") == 1:
        lines = _inflated_lines(body)
        try:
            first = json.loads(next(lines, b"{}"))
        except ValueError:
            raise SealError(N_("the file's contents are damaged")) from None
        if not isinstance(first, dict):
            raise SealError(N_("the file's contents are damaged"))
        return header, {**first, "changes": _parsed(lines)}
    try:
        payload = json.loads(b"\n".join(_inflated_lines(body)))  # a file of an earlier version
    except ValueError:
        raise SealError(N_("the file's contents are damaged")) from None
    if not isinstance(payload, dict):
        raise SealError(N_("the file's contents are damaged"))
    return header, payload


INFLATED_PIECE = 1 << 20  # bytes decompressed at a time
MOST_RATIO = 50  # JSON changes compress 5–15 times; a file inflating past this is a bomb


def _inflated_lines(body: bytes) -> Iterator[bytes]:
    """The decompressed lines of `body`, a piece at a time: at most `MOST_RATIO` times
    its size and `MAX_INFLATED` in all (a 0.9 MB file inflating to 900 MB is refused
    after a few megabytes, not held whole)."""
    most = min(MAX_INFLATED, MOST_RATIO * len(body) + INFLATED_PIECE)
    inflater, pending, total, rest = zlib.decompressobj(), b"", 0, body
    while rest or not inflater.eof:
        try:
            piece = inflater.decompress(rest, INFLATED_PIECE)
        except zlib.error:
            raise SealError(N_("the file's contents are damaged")) from None
        rest = inflater.unconsumed_tail
        total += len(piece)
        if total > most:
            raise SealError(N_("the file inflates to more than {most} MB: it is not read "
                               "further"), most=most >> 20)
        if not piece and not rest:
            break
        *whole, pending = (pending + piece).split(b"\n")
        yield from whole
    if pending:
        yield pending


def _parsed(lines: Iterator[bytes]) -> Iterator[Any]:
    for line in lines:
        try:
            yield json.loads(line)
        except ValueError:
            raise SealError(N_("the file's contents are damaged")) from None
