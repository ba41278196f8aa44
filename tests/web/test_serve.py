"""``contamcheck serve``: loopback only, lazy imports, a real server that prints where it is."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from live_server import running_server

from contamcheck.cli import main
from contamcheck.errors import InputError
from contamcheck.web import loopback_bind_address


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "10.0.0.7", "8.8.8.8", "[::]"])
def test_a_non_loopback_bind_is_refused_with_exit_2(host, capsys):
    code = main(["serve", "--host", host])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("contamcheck: error: --host")
    assert "loopback" in err and "ssh -L" in err


def test_a_host_name_that_resolves_elsewhere_is_refused(monkeypatch, capsys):
    def resolve(name, *args, **kwargs):
        assert name == "lan-box"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.168.1.30", 0))]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    assert main(["serve", "--host", "lan-box"]) == 2
    assert "resolves to 192.168.1.30, which is not loopback" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("data", "said"), [("/proc/contamcheck-data", "can't be created"), ("/sys/kernel", "can't be written")]
)
def test_a_data_folder_that_cant_be_made_or_written_is_an_input_error(data, said, capsys):
    """Was 'Internal error (OSError: Read-only file system)', exit 3, for one that exists."""
    assert main(["serve", "--port", "0", "--data", data]) == 2
    err = capsys.readouterr().err
    assert f"--data {data!r} {said}" in err and "Internal error" not in err, err


def test_a_host_name_that_does_not_resolve_is_refused(capsys):
    assert main(["serve", "--host", "no-such-host.invalid"]) == 2
    assert "does not resolve" in capsys.readouterr().err


def test_loopback_addresses_are_accepted():
    assert loopback_bind_address("127.0.0.1") == "127.0.0.1"
    assert loopback_bind_address("127.0.0.2") == "127.0.0.2"
    assert loopback_bind_address("[::1]") == "::1"
    assert loopback_bind_address("localhost") in ("127.0.0.1", "::1")
    with pytest.raises(InputError):
        loopback_bind_address("")


def test_serve_imports_the_web_framework_only_when_it_serves():
    code = (
        "import sys; from contamcheck.cli import main; "
        "assert main(['--help']) == 0 and main(['serve', '--help']) == 0; "
        "assert main(['serve', '--host', '0.0.0.0']) == 2; "
        "heavy = ('fastapi', 'uvicorn', 'starlette', 'torch', 'transformers'); "
        "heavy = [m for m in heavy if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "serve" in result.stdout and "--max-upload-mb" in result.stdout


def test_the_real_server_listens_on_loopback_and_answers_only_to_loopback_names(tmp_path):
    import urllib.error
    import urllib.request

    with running_server(tmp_path / "web") as server:
        assert server.url.startswith("http://127.0.0.1:")
        assert f"data: {tmp_path / 'web'}" in server.banner
        with urllib.request.urlopen(server.url, timeout=10) as response:
            assert response.status == 200
            assert "New audit" in response.read().decode()
        request = urllib.request.Request(server.url, headers={"Host": "evil.example"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 400


def test_a_port_in_use_is_a_usage_error(tmp_path, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port), "--data", str(tmp_path / "data")]) == 2
    assert f"--port {port}" in capsys.readouterr().err
    assert not (tmp_path / "data").exists()  # nothing left behind
