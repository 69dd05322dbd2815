"""Small C kernels for the fast engine on a CPU, compiled at first use (kernels.c): the LSTM and GRU cell steps
forward and backward, the soft monotonic attention recursion (Raffel et al.'s eq. 9), and the additive (concat,
RNNsearch) attention energies and their backward pass.
Details: docs/internals/engine.md."""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

import torch

from ...base.compiled import cached_library, compile_to, compiler, compiler_version, processor

SOURCE = Path(__file__).with_name("kernels.c")
# -ffast-math lets the compiler vectorise expf/tanhf (glibc's vector math library); the kernels see no inf or NaN.
FLAGS = ["-O3", "-ffast-math", "-fopenmp-simd", "-shared", "-fPIC"]
ARCH_FLAGS = ["-march=native"]

# loops: whether the whole-sequence loops (which call torch's BLAS from C) are usable beside the step kernels
_state: dict = {"lib": None, "tried": False, "reason": None, "loops": False}

_i64, _ptr = ctypes.c_int64, ctypes.c_void_p
_SIGNATURES = {
    "lstm_cell_forward": [_ptr, _i64, _ptr, _i64, _ptr, _i64, _ptr, _i64, _ptr, _i64, _i64, _i64],
    "lstm_cell_backward": [
        _ptr,
        _i64,
        _ptr,
        _i64,
        _ptr,
        _i64,
        _ptr,
        _i64,
        _ptr,
        _i64,
        _ptr,
        _i64,
        _ptr,
        _i64,
        _ptr,
        _i64,
        _i64,
        _i64,
    ],
    "monotonic_forward": [_ptr, _ptr, _ptr, ctypes.c_float, _ptr, _ptr, _ptr, _ptr, _ptr, _i64, _i64],
    "monotonic_backward": [_ptr, _ptr, _ptr, ctypes.c_float, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _i64, _i64],
    "gru_cell_forward": [_ptr, _i64, _ptr, _i64, _ptr, _i64, _ptr, _i64, _i64, _i64],
    "additive_energy_forward": [_ptr, _ptr, _i64, _ptr, _ptr, _ptr, _i64, _i64, _i64],
    "additive_energy_backward": [_ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _i64, _i64, _i64],
    "additive_attention_forward": [
        _ptr,
        _ptr,
        _i64,
        _ptr,
        _ptr,
        _ptr,
        _i64,
        _ptr,
        _ptr,
        _i64,
        _ptr,
        _i64,
        _i64,
        _i64,
        _i64,
        _i64,
    ],
    "additive_attention_backward": [
        _ptr,
        _i64,
        _ptr,
        _i64,
        _ptr,
        _ptr,
        _i64,
        _ptr,
        _ptr,
        _i64,
        _ptr,
        _ptr,
        _ptr,
        _ptr,
        _i64,
        _ptr,
        _i64,
        _i64,
        _i64,
        _i64,
        _i64,
    ],
    "gru_cell_backward": [
        _ptr,
        _i64,
        _ptr,
        _i64,
        _ptr,
        _i64,
        _ptr,
        _i64,
        _ptr,
        _i64,
        _ptr,
        _i64,
        _ptr,
        _i64,
        _ptr,
        _i64,
        _i64,
        _i64,
    ],
    "set_sgemm": [_ptr],
    "blas_matmul": [_i64, _i64, _i64, _ptr, _ptr, _ptr],
    "lstm_layer_forward": [_ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _i64, _i64, _i64],
    "lstm_layer_backward": [_ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _i64, _i64, _i64],
    "feed_forward_step": [_ptr, _i64, _ptr, _i64, _i64, _i64, _i64],
    "feed_backward_step": [_ptr, _i64, _ptr, _i64, _i64, _i64, _i64],
    "feed_forward_step_global": [_ptr, _ptr, _i64, _i64, _i64, _i64, _i64, _i64, _i64],
    "feed_backward_step_global": [_ptr, _ptr, _i64, _i64, _i64, _i64, _i64, _i64, _i64],
}


def _build(cc: str, target: Path) -> None:
    """Compile kernels.c into `target`, -march=native first, without it if the compiler refuses."""
    errors = []
    for arch in (ARCH_FLAGS, []):
        done = compile_to(cc, [*FLAGS, *arch, str(SOURCE), "-lm"], target)
        if done.returncode == 0:
            return
        lines = done.stderr.strip().splitlines()
        # the first "error:" line names the cause; the last one is often just "compilation terminated."
        errors.append(
            next((line for line in lines if "error" in line), lines[-1] if lines else f"exit {done.returncode}")
        )
    version = compiler_version(cc)
    raise RuntimeError(
        f"{cc} could not compile {SOURCE.name} ({errors[-1]}; compiler: {version.splitlines()[0] if version else '?'})"
    )


def _load() -> ctypes.CDLL:
    cc = compiler()
    if cc is None:
        raise RuntimeError("no C compiler found (set CC)")
    target = cached_library(
        "native",
        [SOURCE.read_text(), " ".join(FLAGS + ARCH_FLAGS), cc, compiler_version(cc), processor()],
        lambda path: _build(cc, path),
    )
    lib = ctypes.CDLL(str(target))
    for name, argtypes in _SIGNATURES.items():
        function = getattr(lib, name)
        function.argtypes, function.restype = argtypes, None
    return lib


def library() -> ctypes.CDLL | None:
    """The compiled kernels, or None (after one line on stderr the first time) where they cannot be had."""
    if _state["tried"]:
        return _state["lib"]
    _state["tried"] = True
    # loaded on first use, which may be inside a bf16 autocast region (`train.precision: bf16` on a CPU): its
    # checks compare fp32 products, so they run with autocast off
    with torch.autocast("cpu", enabled=False):
        return _load_checked()


def _load_checked() -> ctypes.CDLL | None:
    if os.environ.get("NMT_NATIVE", "1") == "0":
        _state["reason"] = "NMT_NATIVE=0"
        return None
    try:
        lib = _load()
        _self_check(lib)
        _state["lib"] = lib
    except Exception as err:  # any failure means the torch path, never a failed run
        _state["reason"] = str(err)
        print(
            f"nmt: native CPU kernels unavailable ({err}); using torch operations instead (slower)",
            file=sys.stderr,
            flush=True,
        )
        return None
    _state["loops"] = os.environ.get("NMT_NATIVE_LOOPS", "1") != "0" and _connect_blas(lib)
    return _state["lib"]


def _blas_sgemm_address() -> int | None:
    """The address of the Fortran BLAS sgemm_ that torch's CPU library exports (MKL's, in the x86 wheels), or None."""
    for name in ("libtorch_cpu.so", "libtorch_cpu.dylib"):
        path = Path(torch.__file__).parent / "lib" / name
        if path.exists():
            try:
                return ctypes.cast(ctypes.CDLL(str(path)).sgemm_, ctypes.c_void_p).value
            except (OSError, AttributeError):
                return None
    return None


def _connect_blas(lib) -> bool:
    """Hand torch's sgemm_ to the whole-sequence loops and check one product against torch.mm; False (the loops stay
    off, the step kernels on) where there is none or it is not called as expected (e.g. 64-bit integers)."""
    address = _blas_sgemm_address()
    if not address:
        return False
    lib.set_sgemm(address)
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(3, 5, generator=gen), torch.randn(5, 7, generator=gen)
    out = torch.empty(3, 7)
    lib.blas_matmul(3, 7, 5, a.data_ptr(), b.data_ptr(), out.data_ptr())
    return torch.allclose(out, a @ b, atol=1e-5, rtol=1e-4)


def loops_usable(*tensors: torch.Tensor) -> bool:
    """Whether the whole-sequence loops apply (see usable): the kernels are loaded and torch's BLAS is reachable."""
    return usable(*tensors) and _state["loops"]


def usable(*tensors: torch.Tensor) -> bool:
    """Whether the kernels apply: fp32 CPU tensors whose rows are contiguous, and the library loaded."""
    for x in tensors:
        if x.device.type != "cpu" or x.dtype != torch.float32 or x.stride(-1) != 1:
            return False
    return library() is not None


def reason() -> str | None:
    """Why the kernels are not in use (None when they are, or were not asked for yet)."""
    return _state["reason"]


def reset(enabled: bool | None = None) -> None:
    """Forget the loaded library (tests): the next call loads it again, or with enabled=False never."""
    _state.update(lib=None, tried=enabled is False, reason="disabled" if enabled is False else None, loops=False)


def _ptr_of(x: torch.Tensor | None) -> int | None:
    return None if x is None else x.data_ptr()


def lstm_cell_forward(lib, gates, c_prev, cell_out, tanh_out, h_out) -> None:
    B, H = c_prev.shape
    lib.lstm_cell_forward(
        gates.data_ptr(),
        gates.stride(0),
        c_prev.data_ptr(),
        c_prev.stride(0),
        cell_out.data_ptr(),
        cell_out.stride(0),
        _ptr_of(tanh_out),
        0 if tanh_out is None else tanh_out.stride(0),
        h_out.data_ptr(),
        h_out.stride(0),
        B,
        H,
    )


def lstm_cell_backward(lib, d_h1, d_h2, d_c, act, c_prev, tanh_c, d_gates, mask=None) -> None:
    B, H = c_prev.shape
    lib.lstm_cell_backward(
        d_h1.data_ptr(),
        d_h1.stride(0),
        _ptr_of(mask),
        0 if mask is None else mask.stride(0),
        _ptr_of(d_h2),
        0 if d_h2 is None else d_h2.stride(0),
        d_c.data_ptr(),
        d_c.stride(0),
        act.data_ptr(),
        act.stride(0),
        c_prev.data_ptr(),
        c_prev.stride(0),
        tanh_c.data_ptr(),
        tanh_c.stride(0),
        d_gates.data_ptr(),
        d_gates.stride(0),
        B,
        H,
    )


def step_rows(active: list, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows computed at each step (nmt.engine.fast_lstm's schedule: None, all, or a slice) as the loops read
    them: int64 start and stop per step."""
    bounds = [(0, batch) if rows is None else (rows.start, rows.stop) for rows in active]
    table = torch.tensor(bounds, dtype=torch.int64).reshape(-1, 2)
    return table[:, 0].contiguous(), table[:, 1].contiguous()


def lstm_layer_forward(lib, acts, W_hh_t, states, cells, tanhs, starts, stops) -> None:
    """One LSTM layer over all steps (kernels.c); every tensor contiguous."""
    S, B, G = acts.shape
    lib.lstm_layer_forward(
        acts.data_ptr(),
        W_hh_t.data_ptr(),
        states.data_ptr(),
        cells.data_ptr(),
        _ptr_of(tanhs),
        starts.data_ptr(),
        stops.data_ptr(),
        S,
        B,
        G // 4,
    )


def lstm_layer_backward(lib, d_out, mask, d_h, d_c, acts, cells, tanhs, d_gates, W_hh, starts, stops) -> None:
    """Its backward pass (kernels.c); every tensor contiguous."""
    S, B, G = acts.shape
    lib.lstm_layer_backward(
        d_out.data_ptr(),
        _ptr_of(mask),
        d_h.data_ptr(),
        d_c.data_ptr(),
        acts.data_ptr(),
        cells.data_ptr(),
        tanhs.data_ptr(),
        d_gates.data_ptr(),
        W_hh.data_ptr(),
        starts.data_ptr(),
        stops.data_ptr(),
        S,
        B,
        G // 4,
    )


def address_table(tensors: list) -> torch.Tensor:
    """The addresses of `tensors` (0 for None) as an int64 tensor: how the decoder's step functions (kernels.c
    feed_forward_step, feed_backward_step) receive their arrays. Keep the tensors alive while it is used."""
    return torch.tensor([0 if x is None else x.data_ptr() for x in tensors], dtype=torch.int64)


def monotonic_forward(lib, energies, present, prev, eps: float):
    """Soft monotonic attention's step (kernels.c): (sig, p, cp, cs, alpha), each [B, S]; inputs contiguous."""
    B, S = energies.shape
    sig, p, cp, cs, alpha = (torch.empty(B, S) for _ in range(5))
    lib.monotonic_forward(
        energies.data_ptr(),
        present.data_ptr(),
        prev.data_ptr(),
        eps,
        sig.data_ptr(),
        p.data_ptr(),
        cp.data_ptr(),
        cs.data_ptr(),
        alpha.data_ptr(),
        B,
        S,
    )
    return sig, p, cp, cs, alpha


def monotonic_backward(lib, d_alpha, present, prev, eps: float, sig, p, cp, cs):
    """Its backward (kernels.c): (d energies, d prev), each [B, S]."""
    B, S = d_alpha.shape
    d_energies, d_prev = torch.empty(B, S), torch.empty(B, S)
    lib.monotonic_backward(
        d_alpha.data_ptr(),
        present.data_ptr(),
        prev.data_ptr(),
        eps,
        sig.data_ptr(),
        p.data_ptr(),
        cp.data_ptr(),
        cs.data_ptr(),
        d_energies.data_ptr(),
        d_prev.data_ptr(),
        B,
        S,
    )
    return d_energies, d_prev


def gru_cell_forward(lib, gi, gh, h_prev, h_out) -> None:
    B, H = h_prev.shape
    lib.gru_cell_forward(
        gi.data_ptr(),
        gi.stride(0),
        gh.data_ptr(),
        gh.stride(0),
        h_prev.data_ptr(),
        h_prev.stride(0),
        h_out.data_ptr(),
        h_out.stride(0),
        B,
        H,
    )


def gru_cell_backward(lib, d_h1, d_h2, act, gh, h_prev, d_gi, d_gh, d_hprev) -> None:
    B, H = h_prev.shape
    lib.gru_cell_backward(
        d_h1.data_ptr(),
        d_h1.stride(0),
        _ptr_of(d_h2),
        0 if d_h2 is None else d_h2.stride(0),
        act.data_ptr(),
        act.stride(0),
        gh.data_ptr(),
        gh.stride(0),
        h_prev.data_ptr(),
        h_prev.stride(0),
        d_gi.data_ptr(),
        d_gi.stride(0),
        d_gh.data_ptr(),
        d_gh.stride(0),
        d_hprev.data_ptr(),
        d_hprev.stride(0),
        B,
        H,
    )


def additive_energy_forward(lib, keys, q, v):
    """(z [B, S, A], e [B, S]): z_s = tanh(keys_s + q), e_s = v . z_s (kernels.c); keys and v contiguous."""
    B, S, A = keys.shape
    z, e = torch.empty(B, S, A), torch.empty(B, S)
    lib.additive_energy_forward(
        keys.data_ptr(), q.data_ptr(), q.stride(0), v.data_ptr(), z.data_ptr(), e.data_ptr(), B, S, A
    )
    return z, e


def additive_energy_backward(lib, d_e, z, v, d_keys, d_v):
    """Its backward: adds into d_keys [B, S, A] and d_v [A]; returns d q [B, A]. d_e contiguous."""
    B, S, A = z.shape
    d_q = torch.empty(B, A)
    lib.additive_energy_backward(
        d_e.data_ptr(), z.data_ptr(), v.data_ptr(), d_keys.data_ptr(), d_v.data_ptr(), d_q.data_ptr(), B, S, A
    )
    return d_q


def additive_attention_forward(lib, keys, q, v, present, noise, memory):
    """(alpha [B, S], context [B, C]) of one step of additive attention (kernels.c); keys, memory, v and present
    contiguous, q and noise with contiguous rows. The backward pass needs the step's q again (z is recomputed)."""
    B, S, A = keys.shape
    C = memory.size(-1)
    alpha, context = torch.empty(B, S), torch.empty(B, C)
    lib.additive_attention_forward(
        keys.data_ptr(),
        q.data_ptr(),
        q.stride(0),
        v.data_ptr(),
        present.data_ptr(),
        _ptr_of(noise),
        0 if noise is None else noise.stride(0),
        memory.data_ptr(),
        alpha.data_ptr(),
        S,
        context.data_ptr(),
        C,
        B,
        S,
        A,
        C,
    )
    return alpha, context


def additive_attention_backward(lib, d_context, d_alpha, memory, alpha, keys, q, v, d_keys, d_v):
    """Its backward (kernels.c): adds into d_keys [B, S, A] and d_v [A]; returns (d q [B, A], d e [B, S])."""
    B, S, A = keys.shape
    C = memory.size(-1)
    d_q, d_e = torch.empty(B, A), torch.empty(B, S)
    lib.additive_attention_backward(
        d_context.data_ptr(),
        d_context.stride(0),
        _ptr_of(d_alpha),
        0 if d_alpha is None else d_alpha.stride(0),
        memory.data_ptr(),
        alpha.data_ptr(),
        alpha.stride(0),
        keys.data_ptr(),
        q.data_ptr(),
        q.stride(0),
        v.data_ptr(),
        d_keys.data_ptr(),
        d_v.data_ptr(),
        d_q.data_ptr(),
        A,
        d_e.data_ptr(),
        S,
        B,
        S,
        A,
        C,
    )
    return d_q, d_e


def _self_check(lib) -> None:
    """The kernels against the same formulas in torch on a random step; a mismatch disables them."""
    gen = torch.Generator().manual_seed(0)
    B, H = 3, 5
    gates = torch.randn(B, 4 * H, generator=gen)
    c_prev = torch.randn(B, H, generator=gen)
    act = gates.clone()
    cell, tanh_c, h = torch.empty(B, H), torch.empty(B, H), torch.empty(B, H)
    lstm_cell_forward(lib, act, c_prev, cell, tanh_c, h)
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    ref_c = f * c_prev + i * g
    ref_h = o * ref_c.tanh()
    d_h, d_c = torch.randn(B, H, generator=gen), torch.randn(B, H, generator=gen)
    d_gates, d_c_prev = torch.empty(B, 4 * H), d_c.clone()
    lstm_cell_backward(lib, d_h, None, d_c_prev, act, c_prev, tanh_c, d_gates)
    dc = d_c + d_h * o * (1 - ref_c.tanh() ** 2)
    ref_dg = torch.cat(
        [dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g), d_h * ref_c.tanh() * o * (1 - o)], 1
    )
    for name, mine, ref in (
        ("c", cell, ref_c),
        ("h", h, ref_h),
        ("d gates", d_gates, ref_dg),
        ("d c", d_c_prev, dc * f),
    ):
        if not torch.allclose(mine, ref, atol=1e-5, rtol=1e-4):
            raise RuntimeError(f"self-check failed: {name} differs from torch's by {(mine - ref).abs().max():.3g}")
