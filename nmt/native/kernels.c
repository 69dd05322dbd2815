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
