"""Ed25519-signed log anchors (issue 11): a key the user holds signs the head; the public key checks it.

The attack is the one HMAC already catches — a chain recomputed after an edit, with the anchor
rewritten to the new head — now against an Ed25519-signed anchor, checked by someone holding only
the public key. Also: the key comes from the environment (PEM files), and misconfigured keys are
clear errors.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

from tests.unit.store.test_eventlog_attacks import RUN, SEAT, _recompute_from_three
from worldkit.errors import UsageError
from worldkit.store import (
    SIGNING_KEY_ENV_VAR,
    VERIFY_KEY_ENV_VAR,
    Ed25519Key,
    EventLog,
    HmacKey,
    Store,
    log_key,
    make_anchor,
    read_anchor,
    verify_chain,
    write_anchor,
)


def _pem_pair(folder: Path, name: str = "user") -> tuple[Path, Path]:
    private = Ed25519PrivateKey.generate()
    secret = folder / f"{name}.pem"
    public = folder / f"{name}.pub.pem"
    secret.write_bytes(private.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    public.write_bytes(private.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo))
    return secret, public


def _signed_run(store: Store, tmp_path: Path) -> tuple[Path, Path, Path]:
    secret, public = _pem_pair(tmp_path)
    path = tmp_path / "anchor.json"
    signer = log_key({SIGNING_KEY_ENV_VAR: str(secret)})
    with EventLog(store, RUN, SEAT, claim=True, anchor=path, key=signer) as log:
        for i in range(1, 7):
            log.append("read_file", {"path": f"file{i}.txt"}, "ok", "a" * 64)
    return secret, public, path


def test_a_recomputed_chain_against_an_ed25519_anchor_is_caught_with_the_public_key(
    store: Store, tmp_path: Path
) -> None:
    _, public, path = _signed_run(store, tmp_path)
    signed = read_anchor(path)
    assert signed.signature is not None and signed.signature.alg == "ed25519"
    assert len(signed.signature.mac) == 128
    checker = log_key({VERIFY_KEY_ENV_VAR: str(public)})
    assert isinstance(checker, Ed25519Key) and not checker.can_sign
    assert verify_chain(store, RUN, anchor=signed, key=checker).ok
    new_head = _recompute_from_three(store)
    # The attacker rewrites the anchor to the recomputed head: unsigned, re-headed, or self-signed.
    unsigned = make_anchor(run_id=RUN, seat=SEAT, session=signed.session, seq=6, head_hash=new_head,
                           final=True, key=None)  # fmt: skip
    write_anchor(unsigned, path)
    assert verify_chain(store, RUN, anchor=read_anchor(path), key=None).ok  # unsigned: undetectable
    report = verify_chain(store, RUN, anchor=read_anchor(path), key=checker)
    assert report.problem is not None and report.problem.kind == "anchor_signature"
    assert f"not signed although {VERIFY_KEY_ENV_VAR} is set" in report.message
    reheaded = signed.model_copy(update={"hash": new_head})
    report = verify_chain(store, RUN, anchor=reheaded, key=checker)
    assert report.problem is not None and "does not match its contents" in report.message
    attacker, _ = _pem_pair(tmp_path, "attacker")
    own = make_anchor(run_id=RUN, seat=SEAT, session=signed.session, seq=6, head_hash=new_head, final=True,
                      key=log_key({SIGNING_KEY_ENV_VAR: str(attacker)}))  # fmt: skip
    report = verify_chain(store, RUN, anchor=own, key=checker)
    assert report.problem is not None and "not with the key" in report.message
    # An HMAC secret cannot vouch for an Ed25519 anchor (nor the reverse).
    report = verify_chain(store, RUN, anchor=own, key=HmacKey(b"secret"))
    assert report.problem is not None and "ed25519" in report.message
    # The original signed anchor no longer matches the recomputed chain either.
    report = verify_chain(store, RUN, anchor=signed, key=checker)
    assert report.problem is not None and report.problem.kind == "anchor_mismatch"


def test_the_private_key_checks_too_and_a_signed_anchor_needs_a_key(store: Store, tmp_path: Path) -> None:
    secret, _, path = _signed_run(store, tmp_path)
    assert verify_chain(store, RUN, anchor=read_anchor(path), key=log_key({SIGNING_KEY_ENV_VAR: str(secret)})).ok
    report = verify_chain(store, RUN, anchor=read_anchor(path), key=None)
    assert not report.ok and VERIFY_KEY_ENV_VAR in report.message
    assert "PRIVATE" not in path.read_text()


def test_log_verify_reads_the_public_key_from_the_environment(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from worldkit._cli.main import run as cli

    with Store.open(store_url) as store:
        _, public, path = _signed_run(store, tmp_path)
    monkeypatch.delenv("WORLDKIT_LOG_KEY", raising=False)
    monkeypatch.setenv(VERIFY_KEY_ENV_VAR, str(public))
    assert cli(["log", "verify", RUN, "--store", store_url, "--anchor", str(path)]) == 0
    with Store.open(store_url) as store:
        _recompute_from_three(store)
    capsys.readouterr()
    assert cli(["log", "verify", RUN, "--store", store_url, "--anchor", str(path)]) == 1
    assert "rewritten" in capsys.readouterr().err


def test_key_configuration_errors_are_clear(tmp_path: Path, store: Store) -> None:
    secret, public = _pem_pair(tmp_path)
    with pytest.raises(UsageError, match="set one|unset one"):
        log_key({SIGNING_KEY_ENV_VAR: str(secret), "WORLDKIT_LOG_KEY": "x"})
    with pytest.raises(UsageError, match="names a public key"):
        log_key({SIGNING_KEY_ENV_VAR: str(public)})
    (tmp_path / "junk.pem").write_text("not a key")
    with pytest.raises(UsageError, match="not an unencrypted PEM key"):
        log_key({VERIFY_KEY_ENV_VAR: str(tmp_path / "junk.pem")})
    with pytest.raises(UsageError, match="cannot read the key file"):
        log_key({SIGNING_KEY_ENV_VAR: str(tmp_path / "missing.pem")})
    # A server given only the public key cannot sign its anchor: refused before anything is logged.
    with pytest.raises(UsageError, match="cannot sign"):
        EventLog(store, "run-pub", SEAT, claim=True, anchor=tmp_path / "a.json",
                 key=log_key({VERIFY_KEY_ENV_VAR: str(public)}))  # fmt: skip
    assert isinstance(log_key({"WORLDKIT_LOG_KEY": "s"}), HmacKey) and log_key({}) is None
