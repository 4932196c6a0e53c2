"""A real local Ray cluster for tests and benchmarks: ``ray start --head`` plus worker nodes.

Every node is a separate ``ray start`` (its own raylet, like a machine of a real cluster) with
ports picked free (outside Ray's worker port range) and a unique short temp dir, so two
clusters on one machine do not collide. Workers import Benchbook and the test harnesses through
``PYTHONPATH`` (the checkout's ``src`` and its root). :meth:`RayCluster.stop` kills only the
processes of this cluster (found by its temp dir and its raylets' children), never other Ray
processes of the machine.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RAY = str(Path(sys.executable).parent / "ray")


def free_port() -> int:
    """A TCP port free right now (the OS's ephemeral range: above Ray's worker ports)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def node_ip() -> str:
    """The address Ray's nodes use on this machine (Ray replaces 127.0.0.1 by it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent: only picks the outgoing interface
            ip: str = s.getsockname()[0]
        except OSError:
            ip = "127.0.0.1"
    return ip


def _procs() -> dict[int, tuple[int, str]]:
    found: dict[int, tuple[int, str]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        found[int(name)] = (int(stat.rsplit(")", 1)[1].split()[1]), cmd)
    return found


@dataclass
class RayCluster:
    """A running local cluster: ``address`` is the head's GCS ``host:port``."""

    temp_dir: Path
    address: str = ""
    env: dict[str, str] = field(default_factory=dict)
    node_ports: list[int] = field(default_factory=list)

    @classmethod
    def start(cls, head_cpus: int = 2) -> RayCluster:
        """Start the head node (``head_cpus`` logical CPUs)."""
        temp = Path(tempfile.mkdtemp(prefix="bbray", dir="/tmp"))  # short: socket paths
        pythonpath = os.pathsep.join(
            [str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]
        )
        # Ray runs its workers at niceness 15 by default: on a machine shared with other work
        # they would only get what is left over. 0 = the priority of everything else.
        env = {
            **os.environ,
            "PYTHONPATH": pythonpath,
            "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_worker_niceness": "0",
        }
        cluster = cls(temp_dir=temp, env=env)
        port, nm = free_port(), free_port()
        cluster._ray(
            "start",
            "--head",
            f"--port={port}",
            "--node-ip-address=127.0.0.1",
            f"--num-cpus={head_cpus}",
            "--include-dashboard=false",
            f"--dashboard-port={free_port()}",
            f"--ray-client-server-port={free_port()}",
            f"--node-manager-port={nm}",
            f"--object-manager-port={free_port()}",
            f"--dashboard-agent-listen-port={free_port()}",
            f"--temp-dir={temp}",
            "--disable-usage-stats",
        )
        cluster.address = f"{node_ip()}:{port}"
        cluster.node_ports.append(nm)
        return cluster

    def add_node(self, cpus: int = 2) -> int:
        """Start one more worker node (``ray start --address``); returns its raylet's port."""
        nm = free_port()
        self._ray(
            "start",
            f"--address={self.address}",
            f"--num-cpus={cpus}",
            f"--node-manager-port={nm}",
            f"--object-manager-port={free_port()}",
            f"--dashboard-agent-listen-port={free_port()}",
            "--disable-usage-stats",
        )
        self.node_ports.append(nm)
        return nm

    def wait_for_nodes(self, count: int, timeout_s: float = 60.0) -> None:
        """Block until the driver (``ray.init`` done) sees ``count`` live nodes."""
        import ray

        deadline = time.monotonic() + timeout_s
        while sum(1 for n in ray.nodes() if n["Alive"]) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the Ray cluster did not reach {count} nodes")
            time.sleep(0.2)

    def raylet_pid(self, node_manager_port: int) -> int:
        """The pid of the raylet listening on ``node_manager_port``."""
        for pid, (_, cmd) in _procs().items():
            if "raylet/raylet" in cmd and f"--node_manager_port={node_manager_port}" in cmd:
                return pid
        raise LookupError(f"no raylet with node manager port {node_manager_port}")

    def kill_node(self, node_manager_port: int) -> None:
        """SIGKILL a node's raylet (its workers exit with it), like a machine lost."""
        os.kill(self.raylet_pid(node_manager_port), signal.SIGKILL)

    def stop(self) -> None:
        """Kill every process of this cluster (its temp dir's, its raylets' and their
        children), leaving other Ray clusters of the machine alone; remove its temp dir."""
        procs = _procs()
        ports = [f"--node_manager_port={p}" for p in self.node_ports]
        mine = {
            pid
            for pid, (_, cmd) in procs.items()
            if pid != os.getpid()
            and (
                str(self.temp_dir) in cmd
                or any(p in cmd for p in ports)
                or f"--address={self.address} " in cmd + " "
            )
            and "pytest" not in cmd
        }
        grown = True
        while grown:
            grown = False
            for pid, (ppid, _) in procs.items():
                if ppid in mine and pid not in mine and pid != os.getpid():
                    mine.add(pid)
                    grown = True
        for pid in mine:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def _ray(self, *args: str) -> None:
        done = subprocess.run(
            [RAY, *args], env=self.env, capture_output=True, timeout=120, cwd=self.temp_dir
        )
        if done.returncode != 0:
            raise RuntimeError(f"ray {args[0]} failed: {done.stderr.decode()[-2000:]}")
