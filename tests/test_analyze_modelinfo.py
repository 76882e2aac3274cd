"""analyze.py modelinfo against a fake Hugging Face hub: a real HTTP server on
127.0.0.1 that answers the hub API calls huggingface_hub makes (repo info, tree
listing, file resolve), then the same command offline from the filled directory."""
import hashlib
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse

import pytest
from conftest import run_script

from tests.support.served import served

SHA = "0123456789abcdef0123456789abcdef01234567"
MIXTRAL = {"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 4096,
           "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
           "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 2, "max_position_embeddings": 32768,
           "torch_dtype": "bfloat16"}
REPOS = {
    "acme/Mixer-8x7B": {
        "config.json": json.dumps(MIXTRAL).encode(),
        "generation_config.json": b'{"temperature": 0.7}',
        "README.md": b"---\nlicense: apache-2.0\nbase_model: acme/base\n---\n# Mixer\n",
        "model-00001.safetensors": b"weights" * 100,      # must not be downloaded
    },
}


class FakeHub(BaseHTTPRequestHandler):
    requests = []

    def log_message(self, *args):
        pass

    def _reply(self, code, body=b"", headers=None):
        self.send_response(code)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        path = unquote(urlparse(self.path).path)
        FakeHub.requests.append(path)
        for repo, files in REPOS.items():
            if path.startswith(f"/api/models/{repo}/revision/"):
                info = {"id": repo, "sha": SHA, "siblings": [{"rfilename": f} for f in files]}
                return self._reply(200, json.dumps(info).encode(), {"Content-Type": "application/json"})
            if path.startswith(f"/api/models/{repo}/tree/"):
                tree = [{"type": "file", "path": f, "size": len(d), "oid": hashlib.sha1(d).hexdigest()}
                        for f, d in files.items()]
                return self._reply(200, json.dumps(tree).encode(), {"Content-Type": "application/json"})
            prefix = f"/{repo}/resolve/{SHA}/"
            if path.startswith(prefix) and path[len(prefix):] in files:
                data = files[path[len(prefix):]]
                return self._reply(200, data, {"ETag": f'"{hashlib.sha1(data).hexdigest()}"', "X-Repo-Commit": SHA})
        self._reply(404, b'{"error": "Repository not found"}',
                    {"Content-Type": "application/json", "X-Error-Code": "RepoNotFound"})

    do_HEAD = do_GET


@pytest.fixture
def hub():
    FakeHub.requests = []
    with served(ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)) as server:
        yield f"http://127.0.0.1:{server.server_port}"


def test_download_then_offline_reuse(hub, tmp_path):
    env = {"HF_ENDPOINT": hub, "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HOME": str(tmp_path / "hfhome")}
    proc = run_script("analyze.py", "modelinfo", "--hf-id", "acme/Mixer-8x7B", "--hf-id", "acme/Nope",
                      "--output-dir", tmp_path / "meta", env=env)
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "meta" / "acme__Mixer-8x7B"
    assert sorted(p.name for p in folder.iterdir() if p.is_file()) == ["README.md", "config.json",
                                                                        "generation_config.json"]
    assert not any("safetensors" in r for r in FakeHub.requests if "/resolve/" in r)
    assert "acme/Nope" in proc.stderr
    first = (tmp_path / "meta" / "MODELINFO.md").read_text()
    row = [line for line in first.splitlines() if line.startswith("| acme/Mixer-8x7B")][0]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:4] == ["MixtralForCausalLM", "46.7B", "12.9B"]
    assert cells[6:] == ["8 (2)", "32768", "bfloat16", "apache-2.0"]
    assert "- base model: acme/base" in first and "- acme/Nope:" in first

    # Offline, with the hub gone: the filled directory is enough.
    offline = dict(env, HF_HUB_OFFLINE="1", HF_ENDPOINT="http://127.0.0.1:9")
    (tmp_path / "meta" / "MODELINFO.md").unlink()
    proc = run_script("analyze.py", "modelinfo", "--hf-id", "acme/Mixer-8x7B", "--output-dir", tmp_path / "meta",
                      env=offline)
    assert proc.returncode == 0, proc.stderr
    assert row in (tmp_path / "meta" / "MODELINFO.md").read_text()
