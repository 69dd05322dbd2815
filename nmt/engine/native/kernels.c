/* Fused LSTM and GRU cell steps for nmt's fast engine on a CPU (nmt/engine/native/__init__.py compiles and loads this
 * file).
 *
 * Each function does, for one time step of a batch, what a handful of separate torch operations would (nmt/engine/
 * lstm_cell.py, nmt/engine/gru_decoder.py have the same formulas in torch): one pass over the rows instead of a pass
 * per operation, and one call from Python instead of one per operation. Row strides are in elements; every row is
 * contiguous. Gates are in torch's order: LSTM (i, f, g, o), GRU (r, z, n).
 */
#include <math.h>
#include <stdint.h>

static inline float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

/* gates [B, 4H] pre-activations, overwritten with the activations; c' = f c + i g, tanh(c'), h' = o tanh(c') */
void lstm_cell_forward(float *gates, int64_t gs, const float *c_prev, int64_t cps, float *c_out, int64_t cos,
                       float *tanh_out, int64_t tos, float *h_out, int64_t hos, int64_t B, int64_t H) {
    for (int64_t b = 0; b < B; b++) {
        float *g = gates + b * gs;
        const float *cp = c_prev + b * cps;
        float *co = c_out + b * cos, *to = tanh_out ? tanh_out + b * tos : 0, *ho = h_out + b * hos;
        #pragma omp simd
        for (int64_t j = 0; j < H; j++) {
            float i = sigmoidf(g[j]), f = sigmoidf(g[H + j]), gg = tanhf(g[2 * H + j]), o = sigmoidf(g[3 * H + j]);
            g[j] = i; g[H + j] = f; g[2 * H + j] = gg; g[3 * H + j] = o;
            float c = f * cp[j] + i * gg;
            float tc = tanhf(c);
            co[j] = c;
            ho[j] = o * tc;
            if (to) to[j] = tc;
        }
    }
}

/* d h' = dh1 (* mask) (+ dh2), d c' = dc (overwritten with d c_prev); act: the activations; writes d pre-activations.
 * mask: the dropout mask h' went through on its way to the layer above (dh1 is that layer's gradient), or NULL. */
void lstm_cell_backward(const float *dh1, int64_t dh1s, const float *mask, int64_t ms, const float *dh2,
                        int64_t dh2s, float *dc, int64_t dcs, const float *act, int64_t as, const float *c_prev,
                        int64_t cps, const float *tanh_c, int64_t tcs, float *dgates, int64_t dgs, int64_t B,
                        int64_t H) {
    for (int64_t b = 0; b < B; b++) {
        const float *d1 = dh1 + b * dh1s, *d2 = dh2 ? dh2 + b * dh2s : 0, *mk = mask ? mask + b * ms : 0;
        float *dcr = dc + b * dcs;
        const float *a = act + b * as, *cp = c_prev + b * cps, *tc = tanh_c + b * tcs;
        float *dg = dgates + b * dgs;
        #pragma omp simd
        for (int64_t j = 0; j < H; j++) {
            float i = a[j], f = a[H + j], g = a[2 * H + j], o = a[3 * H + j], t = tc[j];
            float dh = mk ? d1[j] * mk[j] : d1[j];
            if (d2) dh += d2[j];
            float c = dcr[j] + dh * o * (1.0f - t * t);
            dg[j] = c * g * i * (1.0f - i);
            dg[H + j] = c * cp[j] * f * (1.0f - f);
            dg[2 * H + j] = c * i * (1.0f - g * g);
            dg[3 * H + j] = dh * t * o * (1.0f - o);
            dcr[j] = c * f;
        }
    }
}

/* Soft monotonic attention, one output step (nmt/engine/attention_kernels.py MonotonicKernel has the same formulas in
 * torch), per row over the S memory positions:
 *   sig = sigmoid(e), p = sig * present, cp_j = prod_{l<j} clamp(1 - p_l, eps, 1) (in log space, as the torch form),
 *   cs_j = sum_{k<=j} prev_k / clamp(cp_k, eps, 1), alpha_j = p_j cp_j cs_j.
 * Keeps sig, p, cp and cs for the backward pass. */
void monotonic_forward(const float *energies, const float *present, const float *prev, float eps, float *sig,
                       float *p, float *cp, float *cs, float *alpha, int64_t B, int64_t S) {
    for (int64_t b = 0; b < B; b++) {
        const float *e = energies + b * S, *m = present + b * S, *pr = prev + b * S;
        float *sg = sig + b * S, *pp = p + b * S, *c = cp + b * S, *s = cs + b * S, *a = alpha + b * S;
        float log_sum = 0.0f, sum = 0.0f;
        for (int64_t j = 0; j < S; j++) {
            float sj = 1.0f / (1.0f + expf(-e[j]));
            float pj = sj * m[j];
            float cj = expf(log_sum);
            float om = 1.0f - pj;
            log_sum += logf(om < eps ? eps : (om > 1.0f ? 1.0f : om));
            float cc = cj < eps ? eps : (cj > 1.0f ? 1.0f : cj);
            sum += pr[j] / cc;
            sg[j] = sj; pp[j] = pj; c[j] = cj; s[j] = sum;
            a[j] = pj * cj * sum;
        }
    }
}

/* Its backward: d_alpha [B, S] (all of it: from the context, the weights and the next step) -> d energies and
 * d prev (the gradient of the previous step's alpha). Clamps pass gradients inside their bounds, as torch.clamp. */
void monotonic_backward(const float *d_alpha, const float *present, const float *prev, float eps, const float *sig,
                        const float *p, const float *cp, const float *cs, float *d_energies, float *d_prev,
                        int64_t B, int64_t S) {
    for (int64_t b = 0; b < B; b++) {
        const float *da = d_alpha + b * S, *m = present + b * S, *pr = prev + b * S;
        const float *sg = sig + b * S, *pp = p + b * S, *c = cp + b * S, *s = cs + b * S;
        float *de = d_energies + b * S, *dp = d_prev + b * S;
        float suffix_u = 0.0f, suffix_logs = 0.0f;   /* sum_{k>=j} d cs_k ; sum_{k>j} d (exclusive log sum)_k */
        for (int64_t j = S - 1; j >= 0; j--) {
            float cj = c[j], pj = pp[j];
            suffix_u += da[j] * pj * cj;
            float cc = cj < eps ? eps : (cj > 1.0f ? 1.0f : cj);
            float d_prev_j = suffix_u / cc;
            dp[j] = d_prev_j;
            float d_cp = da[j] * pj * s[j] - (cj >= eps ? d_prev_j * pr[j] / cc : 0.0f);
            float om = 1.0f - pj;
            float d_p = da[j] * cj * s[j] - (om >= eps ? suffix_logs / (om > 1.0f ? 1.0f : om) : 0.0f);
            suffix_logs += d_cp * cj;
            de[j] = d_p * m[j] * sg[j] * (1.0f - sg[j]);
        }
    }
}

/* GRU cell (nn.GRU / nn.GRUCell's formulas, gates r, z, n):
 *   r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z), n = tanh(gi_n + r gh_n), h' = n + z (h - n)
 * gi, gh [B, 3H]: the input and hidden products with their biases. gi is overwritten with (r, z, n). */
void gru_cell_forward(float *gi, int64_t gis, const float *gh, int64_t ghs, const float *h_prev, int64_t hps,
                      float *h_out, int64_t hos, int64_t B, int64_t H) {
    for (int64_t b = 0; b < B; b++) {
        float *a = gi + b * gis;
        const float *g = gh + b * ghs, *hp = h_prev + b * hps;
        float *ho = h_out + b * hos;
        #pragma omp simd
        for (int64_t j = 0; j < H; j++) {
            float r = sigmoidf(a[j] + g[j]);
            float z = sigmoidf(a[H + j] + g[H + j]);
            float n = tanhf(a[2 * H + j] + r * g[2 * H + j]);
            a[j] = r; a[H + j] = z; a[2 * H + j] = n;
            ho[j] = n + z * (hp[j] - n);
        }
    }
}

/* Its backward: d h' = dh1 (+ dh2); act = (r, z, n) as the forward left them; gh: the hidden products (gh_n is read).
 * Writes d gi, d gh [B, 3H] and d h_prev's direct part (dh z; the caller adds d gh W_hh). */
void gru_cell_backward(const float *dh1, int64_t dh1s, const float *dh2, int64_t dh2s, const float *act, int64_t as,
                       const float *gh, int64_t ghs, const float *h_prev, int64_t hps, float *d_gi, int64_t dgis,
                       float *d_gh, int64_t dghs, float *d_hprev, int64_t dhps, int64_t B, int64_t H) {
    for (int64_t b = 0; b < B; b++) {
        const float *d1 = dh1 + b * dh1s, *d2 = dh2 ? dh2 + b * dh2s : 0;
        const float *a = act + b * as, *g = gh + b * ghs, *hp = h_prev + b * hps;
        float *dgi = d_gi + b * dgis, *dgh = d_gh + b * dghs, *dhp = d_hprev + b * dhps;
        #pragma omp simd
        for (int64_t j = 0; j < H; j++) {
            float r = a[j], z = a[H + j], n = a[2 * H + j];
            float dh = d2 ? d1[j] + d2[j] : d1[j];
            float dn = dh * (1.0f - z) * (1.0f - n * n);       /* d (gi_n + r gh_n) */
            float dr = dn * g[2 * H + j] * r * (1.0f - r);
            float dz = dh * (hp[j] - n) * z * (1.0f - z);
            dgi[j] = dr; dgi[H + j] = dz; dgi[2 * H + j] = dn;
            dgh[j] = dr; dgh[H + j] = dz; dgh[2 * H + j] = dn * r;
            dhp[j] = dh * z;
        }
    }
}

/* Additive (concat) attention, one decoder step per row b (RNNsearch's e_ij = v^T tanh(W s + U h_j + b), Luong et
 * al.'s concat score):
 *   z_s = tanh(keys_s + q), e_s = v . z_s (+ noise_s), alpha = softmax over the present positions (the others get 0),
 *   context = sum_s alpha_s memory_s.
 * keys [B, S, A], memory [B, S, C] contiguous; q [B, A], present [B, S] (1 or 0), noise [B, S] (or NULL) rows
 * contiguous. Writes alpha [B, S] and context [B, C]; z is not kept (the backward pass recomputes it: writing and
 * reading back [B, S, A] per step, fresh memory each batch, cost more than the tanh). No infinities are used: the
 * file is compiled with -ffast-math. */
void additive_attention_forward(const float *keys, const float *q, int64_t qs, const float *v, const float *present,
                                const float *noise, int64_t ns, const float *memory, float *alpha,
                                int64_t als, float *context, int64_t cs, int64_t B, int64_t S, int64_t A, int64_t C) {
    for (int64_t b = 0; b < B; b++) {
        const float *qb = q + b * qs, *pr = present + b * S, *nz = noise ? noise + b * ns : 0;
        float *al = alpha + b * als, *cx = context + b * cs;
        float top = 0.0f;
        int first = 1;
        for (int64_t s = 0; s < S; s++) {
            const float *k = keys + (b * S + s) * A;
            float e = 0.0f;
            #pragma omp simd reduction(+:e)
            for (int64_t a = 0; a < A; a++) e += tanhf(k[a] + qb[a]) * v[a];
            if (nz) e += nz[s];
            al[s] = e;
            if (pr[s] != 0.0f && (first || e > top)) { top = e; first = 0; }
        }
        float total = 0.0f;
        for (int64_t s = 0; s < S; s++) {
            float p = pr[s] != 0.0f ? expf(al[s] - top) : 0.0f;
            al[s] = p;
            total += p;
        }
        for (int64_t c = 0; c < C; c++) cx[c] = 0.0f;
        for (int64_t s = 0; s < S; s++) {
            float p = al[s] / total;
            al[s] = p;
            const float *m = memory + (b * S + s) * C;
            #pragma omp simd
            for (int64_t c = 0; c < C; c++) cx[c] += p * m[c];
        }
    }
}

/* Its backward for one step, from the step's keys and q (z recomputed): d_context [B, C] (and d_alpha_extra [B, S], or
 * NULL) -> adds d keys [B, S, A] and d v [A] into their accumulators, writes d q [B, A] (the sum over s of d z_s) and
 * d e [B, S]. */
void additive_attention_backward(const float *d_context, int64_t dcs, const float *d_alpha_extra, int64_t des,
                                 const float *memory, const float *alpha, int64_t als, const float *keys,
                                 const float *q, int64_t qs, const float *v,
                                 float *d_keys, float *d_v, float *d_q, int64_t dqs, float *d_e, int64_t dees,
                                 int64_t B, int64_t S, int64_t A, int64_t C) {
    for (int64_t b = 0; b < B; b++) {
        const float *dc = d_context + b * dcs, *al = alpha + b * als;
        float *dq = d_q + b * dqs, *de = d_e + b * dees;
        float dot = 0.0f;
        for (int64_t s = 0; s < S; s++) {
            const float *m = memory + (b * S + s) * C;
            float da = 0.0f;
            #pragma omp simd reduction(+:da)
            for (int64_t c = 0; c < C; c++) da += m[c] * dc[c];
            if (d_alpha_extra) da += d_alpha_extra[b * des + s];
            de[s] = da;
            dot += da * al[s];
        }
        for (int64_t a = 0; a < A; a++) dq[a] = 0.0f;
        for (int64_t s = 0; s < S; s++) {
            float e = al[s] * (de[s] - dot);
            de[s] = e;
            const float *k = keys + (b * S + s) * A, *qb = q + b * qs;
            float *dk = d_keys + (b * S + s) * A;
            #pragma omp simd
            for (int64_t a = 0; a < A; a++) {
                float t = tanhf(k[a] + qb[a]);  /* recomputed: storing z [B, S, A] per step costs more */
                float dz = e * v[a] * (1.0f - t * t);
                dk[a] += dz;
                dq[a] += dz;
                d_v[a] += e * t;
            }
        }
    }
}

/* The energies alone of additive attention, for the layers that do something else than a softmax with them (monotonic
 * attention's eq15/eq16, local attention's window): z_s = tanh(keys_s + q), e_s = v . z_s, per row b.
 * keys [B, S, A] contiguous, q [B, A] rows contiguous; writes z [B, S, A] and e [B, S]. */
void additive_energy_forward(const float *keys, const float *q, int64_t qs, const float *v, float *z, float *e,
                             int64_t B, int64_t S, int64_t A) {
    for (int64_t b = 0; b < B; b++) {
        const float *qb = q + b * qs;
        for (int64_t s = 0; s < S; s++) {
            const float *k = keys + (b * S + s) * A;
            float *zz = z + (b * S + s) * A;
            float acc = 0.0f;
            #pragma omp simd reduction(+:acc)
            for (int64_t a = 0; a < A; a++) {
                float t = tanhf(k[a] + qb[a]);
                zz[a] = t;
                acc += t * v[a];
            }
            e[b * S + s] = acc;
        }
    }
}

/* Its backward: d e [B, S] -> adds d keys [B, S, A] and d v [A] into their accumulators, writes d q [B, A]. */
void additive_energy_backward(const float *d_e, const float *z, const float *v, float *d_keys, float *d_v, float *d_q,
                              int64_t B, int64_t S, int64_t A) {
    for (int64_t b = 0; b < B; b++) {
        float *dq = d_q + b * A;
        for (int64_t a = 0; a < A; a++) dq[a] = 0.0f;
        for (int64_t s = 0; s < S; s++) {
            float de = d_e[b * S + s];
            const float *zz = z + (b * S + s) * A;
            float *dk = d_keys + (b * S + s) * A;
            #pragma omp simd
            for (int64_t a = 0; a < A; a++) {
                float t = zz[a];
                float dz = de * v[a] * (1.0f - t * t);
                dk[a] += dz;
                dq[a] += dz;
                d_v[a] += de * t;
            }
        }
    }
}

/* -- whole-sequence loops --------------------------------------------------------------------------------------
 * A loop over the steps of a sequence in C instead of Python: one call per layer instead of a few torch operations
 * per step, each with its dispatch and Python's bookkeeping (at the demo's sizes the larger part of a step's time).
 * The matrix products go to the BLAS torch itself uses (its sgemm_, Fortran interface, 32-bit integers), whose
 * address nmt/engine/native/__init__.py hands over with set_sgemm; without it these functions are never called. */
typedef void (*sgemm_fn)(const char *, const char *, const int *, const int *, const int *, const float *,
                         const float *, const int *, const float *, const int *, const float *, float *, const int *);
static sgemm_fn blas_sgemm = 0;

void set_sgemm(void *address) { blas_sgemm = (sgemm_fn)address; }

/* Row-major C[m, n] = A[m, k] B[k, n] + beta C (leading dimensions lda, ldb, ldc): the column-major product
 * C^T = B^T A^T, which is what a row-major array is to Fortran. */
static void matmul(int64_t m, int64_t n, int64_t k, const float *A, int64_t lda, const float *B, int64_t ldb,
                   float *C, int64_t ldc, float beta) {
    if (m <= 0 || n <= 0) return;
    const int M = (int)m, N = (int)n, K = (int)k, LDA = (int)lda, LDB = (int)ldb, LDC = (int)ldc;
    const float one = 1.0f;
    blas_sgemm("N", "N", &N, &M, &K, &one, B, &LDB, A, &LDA, &beta, C, &LDC);
}

/* The product alone, for the load-time check that the BLAS is called the way matmul calls it. */
void blas_matmul(int64_t m, int64_t n, int64_t k, const float *A, const float *B, float *C) {
    matmul(m, n, k, A, k, B, n, C, n, 0.0f);
}

/* One LSTM layer over S steps (nmt/engine/fast_lstm.py's _layer_forward, same formulas). acts [S, B, 4H]: each
 * step's input projection plus bias, to which the recurrent product is added and which then holds the gate
 * activations; states, cells [S + 1, B, H] with row 0 the initial ones; tanhs [S, B, H] (or NULL) tanh of each
 * cell; W_hh_t [H, 4H]. At step t only rows starts[t] .. stops[t] - 1 are inside their sentence: the others keep
 * their state and cell. All arrays contiguous. */
void lstm_layer_forward(float *acts, const float *W_hh_t, float *states, float *cells, float *tanhs,
                        const int64_t *starts, const int64_t *stops, int64_t S, int64_t B, int64_t H) {
    const int64_t G = 4 * H;
    for (int64_t t = 0; t < S; t++) {
        const int64_t r0 = starts[t], n = stops[t] - r0;
        float *act = acts + (t * B + r0) * G;
        const float *h = states + (t * B + r0) * H, *c = cells + (t * B + r0) * H;
        float *h_next = states + ((t + 1) * B + r0) * H, *c_next = cells + ((t + 1) * B + r0) * H;
        matmul(n, G, H, h, H, W_hh_t, G, act, G, 1.0f);
        lstm_cell_forward(act, G, c, H, c_next, H, tanhs ? tanhs + (t * B + r0) * H : 0, H, h_next, H, n, H);
        for (int64_t b = 0; b < B; b++) {  /* rows past their sentence's end keep their state */
            if (b >= r0 && b < r0 + n) continue;
            for (int64_t j = 0; j < H; j++) {
                states[((t + 1) * B + b) * H + j] = states[(t * B + b) * H + j];
                cells[((t + 1) * B + b) * H + j] = cells[(t * B + b) * H + j];
            }
        }
    }
}

/* Its backward pass (fast_lstm.py's _FastLSTM.backward, same formulas): d_out [S, B, H] the gradient of the layer's
 * outputs (through `mask` [S, B, H], the dropout between it and the layer above, or NULL); d_h, d_c [B, H] the
 * gradients of the final state and cell, turned into those of the initial ones; d_gates [S, B, 4H] receives the
 * gradients of the pre-activations (rows outside their sentence are left as they are: the caller zeroes them);
 * W_hh [4H, H]. */
void lstm_layer_backward(const float *d_out, const float *mask, float *d_h, float *d_c, const float *acts,
                         const float *cells, const float *tanhs, float *d_gates, const float *W_hh,
                         const int64_t *starts, const int64_t *stops, int64_t S, int64_t B, int64_t H) {
    const int64_t G = 4 * H;
    for (int64_t t = S - 1; t >= 0; t--) {
        const int64_t r0 = starts[t], n = stops[t] - r0;
        const int64_t row = t * B + r0;
        float *dg = d_gates + row * G;
        lstm_cell_backward(d_out + row * H, H, mask ? mask + row * H : 0, H, d_h + r0 * H, H, d_c + r0 * H, H,
                           acts + row * G, G, cells + row * H, H, tanhs + row * H, H, dg, G, n, H);
        matmul(n, H, G, dg, G, W_hh, H, d_h + r0 * H, H, 0.0f);
    }
}

/* The input-feeding decoder's steps around its attention (nmt/engine/feed_decoder.py's _run and backward, same
 * formulas): everything of a step but the attention kernel, which stays in Python (one per attention family). The
 * tensors come as a table of addresses, for L layers:
 *   forward  tab[0..L) INP[l] [T+1, B, 2H] (x_t ; h_{t-1} of layer l at step t), [L..2L) ACT[l] [T, B, 4H] (the
 *            step's input-free part of the gates, then its activations), [2L..3L) C[l] [T+1, B, H] cells,
 *            [3L..4L) TC[l] [T, B, H] tanh of the cells (or 0), [4L..5L) the weights of [x ; h] transposed
 *            [2H, 4H], then CH [T, B, 2H] ([c_t ; h_t] of the top layer), W_c transposed [2H, H], the dropout masks
 *            between layers [L-1, T, B, H] (or 0).
 *   backward the same first 4L, then [4L..5L) the weights of [x ; h] [4H, 2H], [5L..6L) DG[l] [T, B, 4H] (written:
 *            the gates' gradients), then W_c [H, 2H], D_PRE [T, B, H] (written), D_CH [T, B, 2H] (written), DH and DC
 *            [L, B, H] (the recurrent gradients, carried from step to step; zeros at first), D_FEED [B, H] (the
 *            gradient of the step's fed htilde; zeros at first), D_INP [B, 2H] (scratch), d HTILDE [T, B, H] (the
 *            gradient of the outputs, or 0), the masks (or 0).
 * All arrays contiguous. */
#define TAB(i) ((float *)(intptr_t)tab[i])

/* Call t = 0 .. T: first, with `context` c_{t-1} (NULL at t = 0), the attentional state of step t - 1,
 * htilde = tanh(W_c [c ; h_top]), written where step t reads its feed; then, for t < T, the LSTM layers of step t. */
void feed_forward_step(const int64_t *tab, int64_t t, const float *context, int64_t T, int64_t B, int64_t H,
                       int64_t L) {
    const int64_t H2 = 2 * H, G = 4 * H;
    float *CH = TAB(5 * L), *W_c_t = TAB(5 * L + 1), *masks = TAB(5 * L + 2);
    if (context) {
        float *ch = CH + (t - 1) * B * H2, *feed = TAB(0) + t * B * H2;
        const float *top = TAB(L - 1) + t * B * H2 + H;  /* h of the top layer after step t - 1 */
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < H; j++) {
                ch[b * H2 + j] = context[b * H + j];
                ch[b * H2 + H + j] = top[b * H2 + j];
            }
        matmul(B, H, H2, ch, H2, W_c_t, H, feed, H2, 0.0f);
        for (int64_t b = 0; b < B; b++) {
            float *row = feed + b * H2;
            #pragma omp simd
            for (int64_t j = 0; j < H; j++) row[j] = tanhf(row[j]);
        }
    }
    if (t >= T) return;
    for (int64_t l = 0; l < L; l++) {
        float *inp = TAB(l) + t * B * H2, *act = TAB(L + l) + t * B * G, *c = TAB(2 * L + l) + t * B * H;
        float *tc = tab[3 * L + l] ? TAB(3 * L + l) + t * B * H : 0;
        float *h = TAB(l) + (t + 1) * B * H2 + H;
        matmul(B, G, H2, inp, H2, TAB(4 * L + l), G, act, G, 1.0f);
        lstm_cell_forward(act, G, c, H, c + B * H, H, tc, H, h, H2, B, H);
        if (l < L - 1) {  /* the next layer's input: h, through the dropout mask */
            float *above = TAB(l + 1) + t * B * H2;
            const float *mask = masks ? masks + (l * T + t) * B * H : 0;
            for (int64_t b = 0; b < B; b++)
                for (int64_t j = 0; j < H; j++)
                    above[b * H2 + j] = mask ? h[b * H2 + j] * mask[b * H + j] : h[b * H2 + j];
        }
    }
}

/* Call t = T-1 .. -1: first, with `d_query` (the gradient of step t + 1's attention query from its kernel; NULL at
 * t = T - 1), the LSTM layers of step t + 1 backwards, which leave the gradient of the htilde fed to it in D_FEED;
 * then, for t >= 0, the attentional layer of step t: D_PRE[t] = d htilde_t * (1 - htilde_t^2) and
 * D_CH[t] = D_PRE[t] W_c (whose context half goes to step t's attention kernel). */
void feed_backward_step(const int64_t *tab, int64_t t, const float *d_query, int64_t T, int64_t B, int64_t H,
                        int64_t L) {
    const int64_t H2 = 2 * H, G = 4 * H;
    float *W_c = TAB(6 * L), *D_PRE = TAB(6 * L + 1), *D_CH = TAB(6 * L + 2), *DH = TAB(6 * L + 3);
    float *DC = TAB(6 * L + 4), *d_x = TAB(6 * L + 5), *D_INP = TAB(6 * L + 6), *d_HT = TAB(6 * L + 7);
    float *masks = TAB(6 * L + 8);
    if (d_query) {
        const int64_t s = t + 1;
        const float *d_ch = D_CH + s * B * H2;
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < H; j++) d_x[b * H + j] = d_ch[b * H2 + H + j] + d_query[b * H + j];
        for (int64_t l = L - 1; l >= 0; l--) {
            const float *mask = (l < L - 1 && masks) ? masks + (l * T + s) * B * H : 0;
            float *dg = TAB(5 * L + l) + s * B * G, *dh = DH + l * B * H;
            lstm_cell_backward(d_x, H, mask, H, dh, H, DC + l * B * H, H, TAB(L + l) + s * B * G, G,
                               TAB(2 * L + l) + s * B * H, H, TAB(3 * L + l) + s * B * H, H, dg, G, B, H);
            matmul(B, H2, G, dg, G, TAB(4 * L + l), H2, D_INP, H2, 0.0f);
            for (int64_t b = 0; b < B; b++)
                for (int64_t j = 0; j < H; j++) {
                    d_x[b * H + j] = D_INP[b * H2 + j];
                    dh[b * H + j] = D_INP[b * H2 + H + j];
                }
        }
    }
    if (t < 0) return;
    const float *ht = TAB(0) + (t + 1) * B * H2;  /* htilde_t, where step t + 1 reads it */
    float *d_pre = D_PRE + t * B * H;
    for (int64_t b = 0; b < B; b++) {
        #pragma omp simd
        for (int64_t j = 0; j < H; j++) {
            float g = d_x[b * H + j] + (d_HT ? d_HT[(t * B + b) * H + j] : 0.0f), y = ht[b * H2 + j];
            d_pre[b * H + j] = g * (1.0f - y * y);
        }
    }
    matmul(B, H2, H, d_pre, H, W_c, H2, D_CH + t * B * H2, H2, 0.0f);
}

/* Global attention with a dot, general or location score inside the decoder's step (Luong et al.'s global model,
 * the fast engine's training; attention_kernels.py's GlobalKernel has the same formulas), so that a step of such a
 * model is one call forward and one backward. att: the attention's table of addresses:
 *   [0] the scores' right-hand side: per sentence keys transposed [B, H, S] (dot, general: keys = W_a hbar or hbar),
 *       or, with `location`, W_a's rows transposed [H, S] for every sentence;
 *   [1] the keys [B, S, H] (0 with `location`), [2] the encoder states [B, S, H], [3] present [B, S] (1 or 0),
 *   [4] A [T, B, S] the weights (written), [5] DS [T, B, S] the scores' gradients (written by the backward pass),
 *   [6] the gradient of the weights [T, B, S] (or 0), [7] scratch [B, S], [8] scratch [B, H].
 * Positions with present 0 get weight 0 (no infinities: the file is compiled with -ffast-math). */
#define ATT(i) ((float *)(intptr_t)att[i])

static void global_attention_forward(const int64_t *att, int location, int64_t t, const float *q, int64_t qs,
                                     float *context, int64_t cs, int64_t B, int64_t S, int64_t H) {
    const float *rhs = ATT(0), *memory = ATT(2), *present = ATT(3);
    float *A = ATT(4) + t * B * S;
    for (int64_t b = 0; b < B; b++) {
        const float *qb = q + b * qs, *r = location ? rhs : rhs + b * H * S, *pr = present + b * S;
        float *a = A + b * S, *cx = context + b * cs;
        for (int64_t s = 0; s < S; s++) a[s] = 0.0f;
        for (int64_t h = 0; h < H; h++) {
            const float qh = qb[h], *row = r + h * S;
            #pragma omp simd
            for (int64_t s = 0; s < S; s++) a[s] += qh * row[s];
        }
        float top = 0.0f;
        int first = 1;
        for (int64_t s = 0; s < S; s++)
            if (pr[s] != 0.0f && (first || a[s] > top)) { top = a[s]; first = 0; }
        float total = 0.0f;
        for (int64_t s = 0; s < S; s++) {
            float e = pr[s] != 0.0f ? expf(a[s] - top) : 0.0f;
            a[s] = e;
            total += e;
        }
        const float inv = total > 0.0f ? 1.0f / total : 0.0f;
        for (int64_t j = 0; j < H; j++) cx[j] = 0.0f;
        for (int64_t s = 0; s < S; s++) {
            a[s] *= inv;
            const float w = a[s], *m = memory + (b * S + s) * H;
            #pragma omp simd
            for (int64_t j = 0; j < H; j++) cx[j] += w * m[j];
        }
    }
}

/* d_context [B, H] (row stride dcs) -> DS[t] and d query [B, H] (ATT(8)). */
static void global_attention_backward(const int64_t *att, int location, int64_t t, const float *d_context,
                                      int64_t dcs, float *d_query, int64_t B, int64_t S, int64_t H) {
    const float *rhs = ATT(0), *keys = ATT(1), *memory = ATT(2), *d_weights = ATT(6);
    const float *A = ATT(4) + t * B * S;
    float *DS = ATT(5) + t * B * S, *d_a = ATT(7);
    for (int64_t b = 0; b < B; b++) {
        const float *dc = d_context + b * dcs, *a = A + b * S;
        float *da = d_a + b * S, *ds = DS + b * S, *dq = d_query + b * H;
        float dot = 0.0f;
        for (int64_t s = 0; s < S; s++) {
            const float *m = memory + (b * S + s) * H;
            float v = d_weights ? d_weights[(t * B + b) * S + s] : 0.0f;
            #pragma omp simd reduction(+:v)
            for (int64_t j = 0; j < H; j++) v += dc[j] * m[j];
            da[s] = v;
            dot += a[s] * v;
        }
        for (int64_t s = 0; s < S; s++) ds[s] = a[s] * (da[s] - dot);
        if (location) {  /* d q = d scores W_a[:S] = d scores (rhs [H, S])^T */
            for (int64_t h = 0; h < H; h++) {
                const float *row = rhs + h * S;
                float v = 0.0f;
                #pragma omp simd reduction(+:v)
                for (int64_t s = 0; s < S; s++) v += ds[s] * row[s];
                dq[h] = v;
            }
        } else {  /* d q = sum_s d scores_s keys_s */
            for (int64_t j = 0; j < H; j++) dq[j] = 0.0f;
            for (int64_t s = 0; s < S; s++) {
                const float w = ds[s], *k = keys + (b * S + s) * H;
                #pragma omp simd
                for (int64_t j = 0; j < H; j++) dq[j] += w * k[j];
            }
        }
    }
}

/* A whole step t of a global-attention decoder: the LSTM layers, the attention, htilde (feed_forward_step's parts).
 * The context goes straight into CH[t]'s first half. */
void feed_forward_step_global(const int64_t *tab, const int64_t *att, int64_t location, int64_t t, int64_t T,
                              int64_t B, int64_t H, int64_t L, int64_t S) {
    const int64_t H2 = 2 * H;
    feed_forward_step(tab, t, 0, T, B, H, L);
    float *ch = TAB(5 * L) + t * B * H2;
    const float *top = TAB(L - 1) + (t + 1) * B * H2 + H;
    global_attention_forward(att, (int)location, t, top, H2, ch, H2, B, S, H);
    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < H; j++) ch[b * H2 + H + j] = top[b * H2 + j];
    float *feed = TAB(0) + (t + 1) * B * H2;
    matmul(B, H, H2, ch, H2, TAB(5 * L + 1), H, feed, H2, 0.0f);
    for (int64_t b = 0; b < B; b++) {
        float *row = feed + b * H2;
        #pragma omp simd
        for (int64_t j = 0; j < H; j++) row[j] = tanhf(row[j]);
    }
}

/* Its backward pass, t = T-1 .. 0: the attention's and the LSTM layers' of step t, then htilde's of step t - 1. */
void feed_backward_step_global(const int64_t *tab, const int64_t *att, int64_t location, int64_t t, int64_t T,
                               int64_t B, int64_t H, int64_t L, int64_t S) {
    const int64_t H2 = 2 * H;
    if (t == T - 1) feed_backward_step(tab, t, 0, T, B, H, L);  /* htilde's of the last step (each call ends with
                                                                   the one of the step before) */
    float *d_query = ATT(8);
    global_attention_backward(att, (int)location, t, TAB(6 * L + 2) + t * B * H2, H2, d_query, B, S, H);
    feed_backward_step(tab, t - 1, d_query, T, B, H, L);
}
