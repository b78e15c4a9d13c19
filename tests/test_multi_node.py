"""Replicas wider than one server: the tensor-parallel ring and the pipeline sends that cross the
inter-node link, the warning when tensor parallelism spans servers, and the link as an input."""

from __future__ import annotations

import dataclasses

import pytest

from core.estimate.result import estimate
from core.spec.cluster import INTER_NODE_LATENCY_S, INTER_NODE_LINKS
from core.spec.deployment import Workload
from core.spec.engine import Parallelism
from core.timing.comm import comm_seconds, links


@pytest.fixture
def h100(deploy):
    def make(tp=1, pp=1, inter_node="infiniband-ndr"):
        dep = deploy(model="llama-3.1-405b", gpu="h100-sxm", weights="fp8", max_model_len=4096)
        return dataclasses.replace(dep, parallel=Parallelism(tp=tp, pp=pp), inter_node=inter_node)

    return make


def test_which_links_a_layout_crosses(h100):
    """Stages fill servers of 8 in order: tp 8 x pp 2 crosses once, tp 4 x pp 4 packs two stages a
    server (one crossing, two boundaries inside), tp 16 runs its ring over the inter-node link."""
    eff = h100().efficiency
    gpu_link = h100().gpu.link_bandwidth * eff.link
    assert links(h100(tp=8, pp=2)) == (gpu_link, eff.allreduce_latency_s, 0, 1)
    assert links(h100(tp=4, pp=4)) == (gpu_link, eff.allreduce_latency_s, 2, 1)
    assert links(h100(tp=2, pp=2)) == (gpu_link, eff.allreduce_latency_s, 1, 0)
    assert links(h100(tp=16)) == (50e9 * eff.link, INTER_NODE_LATENCY_S, 0, 0)
    assert links(h100(tp=16, inter_node="ethernet-100g"))[0] == 12.5e9 * eff.link


def test_a_ring_across_servers_by_hand(h100):
    """tp 16, one decode step of 32 tokens: (2 x 126 layers + 1) all-reduces, each 20 us + 2 x 15/16
    x 32 x 16384 x 2 B / (50 GB/s x link eff.)."""
    dep = h100(tp=16)
    eff = dep.efficiency
    message = 32 * 16384 * 2
    per = INTER_NODE_LATENCY_S + 2 * 15 / 16 * message / (50e9 * eff.link)
    assert float(comm_seconds(dep, 32, 1)) == pytest.approx(253 * per)
    # the pipeline send of tp 8 x pp 2 crosses: 20 us + message / (50 GB/s x eff.), beside tp 8's ring
    cross = h100(tp=8, pp=2)
    inside = float(comm_seconds(cross, 32, 1)) - float(comm_seconds(h100(tp=8), 32, 1))
    assert inside == pytest.approx(INTER_NODE_LATENCY_S + message / (INTER_NODE_LINKS["infiniband-ndr"] * eff.link))


def test_tensor_parallelism_across_servers_is_warned_about(h100, cli):
    work = Workload(input_len=1024, output_len=128, batch=8)
    codes = [w.code for w in estimate(h100(tp=16), work).warnings]
    assert "tp_crosses_nodes" in codes
    assert "tp_crosses_nodes" not in [w.code for w in estimate(h100(tp=8, pp=2), work).warnings]
    code, out, _ = cli(
        "estimate", "--model", "llama-3.1-405b", "--gpu", "h100-sxm", "--tp", "16", "--weight-dtype", "fp8"
    )
    assert code == 0 and "tensor parallel 16 spans 2 servers of 8 GPUs" in out
    code, _, err = cli("estimate", "--model", "llama-3.1-8b", "--gpu", "a10", "--inter-node", "smoke-signals")
    assert code == 2 and "--inter-node" in err


def test_an_unknown_inter_node_link_is_refused(h100):
    with pytest.raises(ValueError, match="inter-node link must be one of"):
        h100(inter_node="carrier-pigeon")
