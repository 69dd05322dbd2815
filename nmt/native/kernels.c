/* Fused LSTM and GRU cell steps for nmt's fast engine on a CPU (nmt/native/__init__.py compiles and loads this file).
 *
 * Each function does, for one time step of a batch, what a handful of separate torch operations would (nmt/models/
 * lstm_cell.py, nmt/models/gru_decoder.py have the same formulas in torch): one pass over the rows instead of a pass
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

/* Soft monotonic attention, one output step (nmt/models/attention_kernels.py MonotonicKernel has the same formulas in
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
 * address nmt/native/__init__.py hands over with set_sgemm; without it these functions are never called. */
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

/* One LSTM layer over S steps (nmt/models/fast_lstm.py's _layer_forward, same formulas). acts [S, B, 4H]: each
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
