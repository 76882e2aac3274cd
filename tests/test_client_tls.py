"""Private CAs: a real TLS server on loopback with a throwaway CA made by the openssl CLI in the test.

What is trusted (docs/runner.md, "Private CAs"): the system store (with $SSL_CERT_FILE /
$SSL_CERT_DIR) plus one extra bundle, the first of --ca-bundle, $REQUESTS_CA_BUNDLE,
$CURL_CA_BUNDLE.
"""
from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess

import pytest

from resolver.client.chat import ChatClient
from resolver.client.tls import ssl_context_for
from resolver.core.errors import UserError
from tests.conftest import run_script
from tests.support.runner import read_folder, run_folders, runner_args
from tests.test_client_hostile_server import FakeServer, answer_ok

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
BUNDLE_VARIABLES = ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR")


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_ca(folder, name):
    """A CA certificate + key (EC P-256, 2 days) in folder/<name>.pem, <name>.key."""
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={name}",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            cwd=folder)
    return folder / f"{name}.pem"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """Two throwaway CAs; a server certificate for 127.0.0.1 signed by the first."""
    folder = tmp_path_factory.mktemp("pki")
    ca, other = make_ca(folder, "test-ca"), make_ca(folder, "other-ca")
    (folder / "ext.cnf").write_text("basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1\n"
                                    "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
                                    "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key",
            "-out", "server.csr", "-subj", "/CN=127.0.0.1", cwd=folder)
    openssl("x509", "-req", "-in", "server.csr", "-CA", "test-ca.pem", "-CAkey", "test-ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf", cwd=folder)
    not_pem = folder / "not-a-bundle.pem"
    not_pem.write_text("this is not a certificate\n")
    return {"ca": ca, "other": other, "cert": folder / "server.pem", "key": folder / "server.key",
            "not_pem": not_pem}


class TlsServer(FakeServer):
    def __init__(self, pki):
        self.ssl_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ssl_context.load_cert_chain(pki["cert"], pki["key"])
        super().__init__(answer_ok)
        self.url = self.url.replace("http://", "https://")


@pytest.fixture
def clean_env(monkeypatch):
    for name in BUNDLE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def models(url, context):
    async def go():
        async with ChatClient(url, ssl_context=context) as client:
            return await client.list_models()
    return asyncio.run(go())


# ---------------------------------------------------------------- which bundle, in process

def test_without_the_ca_the_server_is_untrusted_in_one_line(pki, clean_env):
    with TlsServer(pki) as srv:
        with pytest.raises(UserError, match="TLS certificate is not trusted.*--ca-bundle"):
            models(srv.url, ssl_context_for(None))


@pytest.mark.parametrize("variable", ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"])
def test_the_bundle_variables_are_honoured(pki, clean_env, variable):
    clean_env.setenv(variable, str(pki["ca"]))
    with TlsServer(pki) as srv:
        assert models(srv.url, ssl_context_for(None)) == ["m"]


def test_precedence_flag_then_requests_then_curl(pki, clean_env):
    clean_env.setenv("CURL_CA_BUNDLE", str(pki["ca"]))
    clean_env.setenv("REQUESTS_CA_BUNDLE", str(pki["other"]))         # wins over CURL_CA_BUNDLE
    with TlsServer(pki) as srv:
        with pytest.raises(UserError, match="not trusted"):
            models(srv.url, ssl_context_for(None))
        assert models(srv.url, ssl_context_for(str(pki["ca"]))) == ["m"]      # the flag wins over both
        clean_env.setenv("REQUESTS_CA_BUNDLE", str(pki["ca"]))
        with pytest.raises(UserError, match="not trusted"):
            models(srv.url, ssl_context_for(str(pki["other"])))


def test_the_bundle_is_added_to_the_system_store_not_in_place_of_it(pki, clean_env):
    context = ssl_context_for(str(pki["ca"]))
    system = ssl.create_default_context()
    assert context.cert_store_stats()["x509_ca"] == system.cert_store_stats()["x509_ca"] + 1


def test_a_directory_of_hashed_certificates_is_a_bundle(pki, clean_env, tmp_path):
    shutil.copy(pki["ca"], tmp_path / "test-ca.pem")
    openssl("rehash", str(tmp_path), cwd=tmp_path)
    with TlsServer(pki) as srv:
        assert models(srv.url, ssl_context_for(str(tmp_path))) == ["m"]


def test_bad_bundles_are_one_line_errors(pki, clean_env, tmp_path):
    with pytest.raises(UserError, match=r"--ca-bundle .*missing.pem: no such file"):
        ssl_context_for(str(tmp_path / "missing.pem"))
    with pytest.raises(UserError, match=r"--ca-bundle .* holds no usable CA certificate"):
        ssl_context_for(str(pki["not_pem"]))
    clean_env.setenv("REQUESTS_CA_BUNDLE", str(tmp_path / "gone.pem"))
    with pytest.raises(UserError, match=r"\$REQUESTS_CA_BUNDLE .*gone.pem: no such file"):
        ssl_context_for(None, https=True)
    assert ssl_context_for(None, https=False) is None                  # unused for an http server


# ---------------------------------------------------------------- the real runner

NO_BUNDLE = {"REQUESTS_CA_BUNDLE": "", "CURL_CA_BUNDLE": ""}       # empty = unset (the system store stays)


@pytest.fixture
def no_bundle(monkeypatch):
    """NO_BUNDLE for a runner run in-process (the runner reads these variables when it starts)."""
    for name, value in NO_BUNDLE.items():
        monkeypatch.setenv(name, value)


def run(url, tmp_path, *extra, env=None):
    """runner.py in-process (with the no_bundle fixture), or as its own process when `env` is
    given: $SSL_CERT_FILE reaches aiohttp's default context only in a process it starts with."""
    args = runner_args(url, tmp_path, model="m", extra=("--parallel", "4", "--task", "boolean", *extra))
    return run_script("runner.py", *args, timeout=240, env={**NO_BUNDLE, **env} if env else None)


@pytest.mark.usefixtures("no_bundle")
def test_the_runner_with_ca_bundle_completes_over_tls(pki, tmp_path):
    with TlsServer(pki) as srv:
        proc = run(srv.url, tmp_path, "--ca-bundle", pki["ca"])
        asked = len(srv.seen)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = read_folder(run_folders(tmp_path / "results")[0])
    assert records and len(records) == asked and all(r["answer"] == "Final Answer: 1" for r in records)


def test_the_runner_honours_ssl_cert_file_as_before(pki, tmp_path):
    with TlsServer(pki) as srv:
        proc = run(srv.url, tmp_path, env={"SSL_CERT_FILE": str(pki["ca"])})
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.usefixtures("no_bundle")
@pytest.mark.parametrize("case", ["untrusted", "missing", "not-pem"])
def test_the_runner_refuses_in_one_line(pki, tmp_path, case):
    extra = {"untrusted": (), "missing": ("--ca-bundle", tmp_path / "nope.pem"),
             "not-pem": ("--ca-bundle", pki["not_pem"])}[case]
    says = {"untrusted": "not trusted", "missing": "no such file", "not-pem": "no usable CA certificate"}[case]
    with TlsServer(pki) as srv:
        proc = run(srv.url, tmp_path, *extra)
        asked = len(srv.seen)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and says in lines[0], proc.stderr
    assert asked == 0 and "Traceback" not in proc.stderr
