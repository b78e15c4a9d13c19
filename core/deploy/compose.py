"""A Docker Compose file (compose-spec) for a :class:`core.deploy.spec.DeploySpec` on one host: per instance a
service running the plan's arguments (``entrypoint`` + ``command``) with its GPUs reserved
(``deploy.resources.reservations.devices``, driver nvidia, ``count`` GPUs), a healthcheck on the engine's
health endpoint, the Hugging Face cache as a named volume, ``shm_size``, HF_TOKEN passed from the environment
of ``docker compose up`` (never written in the file). An instance over more than one node has no Compose form
(refused in one line)."""

from __future__ import annotations

import shlex

from core.deploy.kubernetes import CACHE_PATH
from core.deploy.spec import CONFIG_DIR, HEALTH_PATH, PORT, DeployError, DeploySpec, Workload


def _service(spec: DeploySpec, w: Workload, host_port: int) -> dict:
    driver = "amd" if spec.gpu_resource.startswith("amd") else "nvidia"
    url = f"http://localhost:{PORT}{HEALTH_PATH[spec.engine]}"
    service: dict = {
        "image": spec.image,
        "entrypoint": list(w.args[:1]),  # the image's own entrypoint replaced: the plan's program
        "command": list(w.args[1:]),
        # the token is read from the shell of `docker compose up`; the file holds only this reference
        "environment": {"HF_TOKEN": "${HF_TOKEN:?set HF_TOKEN to a Hugging Face token}"},  # nosec B105
        "ports": [f"{host_port}:{PORT}"],
        "volumes": [f"model-cache:{CACHE_PATH}"],
        "shm_size": "16gb",
        "ipc": "host",
        "healthcheck": {
            "test": ["CMD-SHELL", f"curl -fsS {shlex.quote(url)} || exit 1"],
            "interval": "10s",
            "timeout": "5s",
            "retries": 6,
            "start_period": "600s",
        },
        "deploy": {
            "replicas": 1,
            "resources": {"reservations": {"devices": [{"driver": driver, "count": w.gpus, "capabilities": ["gpu"]}]}},
        },
    }
    if w.serve.files:
        service["working_dir"] = CONFIG_DIR
        service["configs"] = [{"source": name, "target": f"{CONFIG_DIR}/{name}"} for name, _ in w.serve.files]
    return service


def compose(spec: DeploySpec) -> dict:
    """The Compose document: one service per instance (replicas get their own host port)."""
    services, configs, port = {}, {}, PORT
    for w in spec.workloads:
        if w.nodes > 1:
            raise DeployError(f"compose: one instance needs {w.gpus} GPUs over {w.nodes} nodes; use --target k8s")
        for n in range(w.replicas):
            base = spec.name if w.role == "engine" else f"{spec.name}-{w.role}"
            services[f"{base}-{n}" if w.replicas > 1 else base] = _service(spec, w, port)
            port += 1
        configs |= {name: {"content": text} for name, text in w.serve.files}
    doc: dict = {"name": spec.name, "services": services, "volumes": {"model-cache": {}}}
    if configs:
        doc["configs"] = configs
    return doc
