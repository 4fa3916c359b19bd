"""The deployment files in deploy/: the nginx site passes ``nginx -t``, the systemd unit starts what the repo has.

docs/how-to/deploy-vm.md walks through them; what these tests cannot try (a running systemd,
a real domain and certificate) is said there.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from evalkit.store import is_postgres, resolve_database

ROOT = Path(__file__).resolve().parent.parent
NGINX_CONF = ROOT / "deploy" / "nginx" / "evalkit.conf"
UNIT = ROOT / "deploy" / "systemd" / "evalkit@.service"
ENV_EXAMPLE = ROOT / "deploy" / "systemd" / "evalkit.env.example"
APP_DIR = "/srv/evalkit"  # where the unit expects the clone (the guide clones there)
ENV_KEYS = {"EVALKIT_DATABASE", "EVALKIT_RESULTS_PASSWORD", "EVALKIT_CONFIG"}


def _nginx() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx")
                                          if Path(p).is_file()), None)


def _unit() -> dict[str, str]:
    """Key -> value of the unit file (each key is given once)."""
    keys: dict[str, str] = {}
    for line in UNIT.read_text().splitlines():
        if "=" in line and not line.startswith(("#", ";", "[")):
            key, value = line.split("=", 1)
            assert key.strip() not in keys, f"{key} given twice"
            keys[key.strip()] = value.strip()
    return keys


def _in_repo(path: str) -> Path:
    """A path of the deployed clone (/srv/evalkit/...) as the same path in this repository."""
    assert path == APP_DIR or path.startswith(APP_DIR + "/"), f"{path} is not inside {APP_DIR}"
    return ROOT / path[len(APP_DIR):].lstrip("/")


# ----------------------------------------------------------------------------- nginx


def test_nginx_config_passes_nginx_t(tmp_path: Path) -> None:
    nginx = _nginx()
    if nginx is None:
        pytest.skip("no nginx binary here (apt-get install nginx-light): the example config is not checked")
    wrapper = tmp_path / "nginx.conf"  # nginx's own http {} around the site, everything else in tmp_path
    temp = "\n".join(f"    {kind}_temp_path {tmp_path / kind};" for kind in
                     ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    wrapper.write_text(f"pid {tmp_path / 'nginx.pid'};\nerror_log stderr;\nevents {{}}\n"
                       f"http {{\n    access_log off;\n{temp}\n    include {NGINX_CONF};\n}}\n")
    done = subprocess.run([nginx, "-t", "-q", "-e", "stderr", "-p", str(tmp_path), "-c", str(wrapper)],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def test_nginx_config_keeps_what_was_tried() -> None:
    """What the live check behind this config found necessary (docs/how-to/deploy-vm.md): sticky routing, the
    websocket upgrade, a long read timeout, and Host with its port (with $host, Streamlit refused the
    websocket of a browser on a non-default port: 403)."""
    text = NGINX_CONF.read_text()
    code = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    assert re.search(r"^\s*hash \$evalkit_route consistent;", code, re.M)
    stream = re.search(r"location /_stcore/stream \{(.*?)\n    \}", code, re.S)
    assert stream, "no location for Streamlit's websocket"
    block = stream.group(1)
    assert re.search(r"proxy_set_header Upgrade\s+\$http_upgrade;", block)
    assert re.search(r"proxy_set_header Connection\s+\$evalkit_connection;", block)
    timeout = re.search(r"proxy_read_timeout (\d+)([smhd]);", block)
    assert timeout and int(timeout.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[timeout.group(2)] >= 3600
    assert "$host;" not in code.replace("$http_host;", "")
    assert re.search(r"^\s*client_max_body_size \S+;", code, re.M)


def test_the_vm_guide_enables_the_instances_nginx_balances() -> None:
    ports = set(re.findall(r"^\s*server 127\.0\.0\.1:(\d+)", NGINX_CONF.read_text(), re.M))
    guide = ROOT / "docs" / "how-to" / "deploy-vm.md"
    enabled = set(re.findall(r"systemctl enable --now ((?:evalkit@\d+ ?)+)", guide.read_text()))
    enabled = {port for line in enabled for port in re.findall(r"evalkit@(\d+)", line)}
    assert ports and enabled == ports, f"nginx upstream {sorted(ports)}, the VM guide enables {sorted(enabled)}"


# ----------------------------------------------------------------------------- systemd


def test_unit_starts_the_app_of_this_repo() -> None:
    unit = _unit()
    workdir = unit["WorkingDirectory"]
    assert workdir == APP_DIR
    argv = shlex.split(unit["ExecStart"])
    python, module_flag, module, command, script = argv[:5]
    assert python == f"{APP_DIR}/.venv/bin/python"
    assert ".venv" in (ROOT / "scripts" / "setup").read_text(), "scripts/setup no longer makes .venv"
    assert (module_flag, module, command) == ("-m", "streamlit", "run")
    assert re.search(r"^streamlit==", (ROOT / "requirements.txt").read_text(), re.M)
    assert (_in_repo(workdir) / script).is_file(), f"ExecStart runs {script}, which the repo does not have"
    options = dict(zip(argv[5::2], argv[6::2], strict=True))
    assert options == {"--server.port": "%i", "--server.address": "127.0.0.1", "--server.headless": "true"}
    assert unit["Restart"] == "always"
    assert unit["User"] and unit["User"] != "root"
    assert unit["EnvironmentFile"] == "/etc/evalkit/evalkit.env"


def test_unit_lets_the_default_sqlite_file_be_written() -> None:
    """ProtectSystem=strict makes everything read-only but ReadWritePaths: the config's SQLite file and the
    env example's SQLite alternative must lie inside it."""
    unit = _unit()
    assert unit["ProtectSystem"] == "strict"
    writable = [_in_repo(p.lstrip("-")) for p in unit["ReadWritePaths"].split()]
    study = tomllib.loads((ROOT / "config.toml").read_text())["study"]
    default = resolve_database(study["database"], ROOT)
    alternative = next(line.split("=", 1)[1] for line in ENV_EXAMPLE.read_text().splitlines()
                       if line.startswith("#EVALKIT_DATABASE=/"))
    for database in (Path(default), _in_repo(alternative)):
        assert any(database.parent == w or w in database.parents for w in writable), database


def test_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed: the unit's syntax is not checked")
    text = UNIT.read_text().replace(f"{APP_DIR}/.venv/bin/python", sys.executable).replace(APP_DIR, str(ROOT))
    (tmp_path / "evalkit@.service").write_text(text.replace("/etc/evalkit/evalkit.env", str(ENV_EXAMPLE)))
    done = subprocess.run([analyze, "verify", str(tmp_path / "evalkit@8501.service")], capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr


def test_env_example_sets_only_what_evalkit_reads() -> None:
    seen: dict[str, str] = {}
    for line in ENV_EXAMPLE.read_text().splitlines():
        assignment = line.removeprefix("#")
        match = re.fullmatch(r"([A-Z_]+)=(\S*)", assignment)
        if not match:
            assert line.startswith("#") or not line.strip(), f"not KEY=value: {line!r}"
            continue
        key, value = match.groups()
        assert key in ENV_KEYS, f"{key}: evalkit reads no such variable"
        assert not value.startswith(("'", '"')), "systemd and a shell would read quotes differently"
        if not line.startswith("#"):
            seen[key] = value
    assert set(seen) == {"EVALKIT_DATABASE", "EVALKIT_RESULTS_PASSWORD"}
    assert is_postgres(resolve_database(seen["EVALKIT_DATABASE"]))
