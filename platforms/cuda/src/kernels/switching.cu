/**
 * The switching function of a CoordinationForce on the GPU: the single device home of its
 * formulas. Compile-time defines fix the code path:
 *   SWITCH_TYPE        0 Rational, 1 Exp, 2 Gaussian, 3 Smap, 4 Cubic, 5 Tanh, 6 Cosinus, 7 Custom, 8 Q
 *   RATIONAL_N, RATIONAL_M, RATIONAL_SIMPLE (m == 2n), RATIONAL_WINDOW (|x - 1| below which the
 *                      ratio of geometric sums replaces the 0/0-prone formula)
 *   USE_R2_ONLY        Rational with even n and m and d0 = 0: evaluated from r^2, no square root
 *   HAS_DMAX, STRETCH  a finite cutoff, and the shift and scale that make s(dmax) = 0
 *   Custom             code generated from the expression replaces the placeholder below,
 *                      setting s and dsdxValue from x
 *   PAIR_PARAMETERS    the pairs of a pair list carry their own weights and r0s (PairValues)
 *   PARTICLE_DISTANCE_POWER  per-atom terms s(r) r^k with k != 0 (particleTerm())
 * Values that do not change the code path are kernel arguments (PairParams), so that
 * updateParametersInContext() does not recompile. Q is evaluated with a length of 1 nm
 * (invR0 = 1, so x = r - d0) and ref = lambda r0 - d0: s = 1/(1 + exp(beta (x - ref))).
 */

typedef struct {
    real invR0, d0, dmax2, scale, shift, a, b, c, imageSearch2, beta, ref;
} PairParams;

/**
 * The values of one pair of a pair list with parameters of its own, weight w and r0 (lengths:
 * 1/r0, or for Q the ref above). With a cutoff: (w times the stretch scale, w times the stretch
 * shift, the length value, dmax^2), the stretch taken at the pair's dmax (without stretching,
 * (w, 0, ...)); without one: (w, the length value).
 */
#if defined(PAIR_PARAMETERS) && defined(HAS_DMAX)
typedef real4 PairValues;
#else
typedef real2 PairValues;
#endif

#ifdef PAIR_PARAMETERS
/** Put one pair's values into its copy of the parameters; returns the weight still to apply to s and g. */
inline DEVICE real applyPairValues(PairValues v, PairParams* p) {
  #ifdef HAS_DMAX
    const real length = v.z;
    p->dmax2 = v.w;
  #else
    const real length = v.y;
  #endif
  #if SWITCH_TYPE == 8
    p->ref = length;
  #else
    p->invR0 = length;
  #endif
  #ifdef STRETCH
    p->scale = v.x;
    p->shift = v.y;
    return 1;
  #else
    return v.x;
  #endif
}
#endif

/** x^N for a compile-time N >= 0, by repeated squaring. */
template <int N>
struct IntPower {
    static inline DEVICE real eval(real x) {
        real half = IntPower<N/2>::eval(x);
        return (N%2 == 0 ? half*half : half*half*x);
    }
};
template <>
struct IntPower<0> {
    static inline DEVICE real eval(real x) {
        return (real) 1;
    }
};
template <>
struct IntPower<1> {
    static inline DEVICE real eval(real x) {
        return x;
    }
};

#if SWITCH_TYPE == 0 && !defined(RATIONAL_SIMPLE)
/**
 * 1 + y + ... + y^(K-1) and its derivative, by Horner's rule. Near y = 1, where
 * (1 - y^a)/(1 - y^b) is 0/0, the ratio of two such sums is exact: sums of positive terms.
 */
template <int K>
inline DEVICE void geometricSum(real y, real* sum, real* derivative) {
    real p = 0, dp = 0;
#pragma unroll
    for (int k = 0; k < K; k++) {
        dp = dp*y+p;
        p = p*y+1;
    }
    *sum = p;
    *derivative = dp;
}

/** (1 - y^A)/(1 - y^B) near y = 1 and its derivative, from geometric sums. */
template <int A, int B>
inline DEVICE real geometricRatio(real y, real* dsdy) {
    real num, dnum, den, dden;
    geometricSum<A>(y, &num, &dnum);
    geometricSum<B>(y, &den, &dden);
    *dsdy = (dnum*den-num*dden)/(den*den);
    return num/den;
}

/**
 * (1 - x^A)/(1 - x^B) (B > A) and its derivative by x where x^B overflows, in y = 1/x, multiplied
 * through by y^B: y^(B-A) (1 - y^A)/(1 - y^B) and (A y^(B-A+1) - s B y)/(1 - y^B), finite where the
 * direct form is inf/inf (CoordinationSwitching::evaluateRational, on the host in double, the same).
 */
template <int A, int B>
inline DEVICE real rationalOfInverse(real y, real* dsdx) {
    const real yba = IntPower<B-A>::eval(y), inverse = RECIP(1-IntPower<B>::eval(y));
    const real s = yba*(1-IntPower<A>::eval(y))*inverse;
    *dsdx = (A*yba*y-s*B*y)*inverse;
    return s;
}
#endif

/** The unstretched s(x) and ds/dx for x > 0. */
inline DEVICE real switchX(real x, const PairParams& p, real* dsdx) {
#if SWITCH_TYPE == 0
  #ifdef RATIONAL_SIMPLE
    real xn1 = IntPower<RATIONAL_N-1>::eval(x);
    real s = RECIP(1+xn1*x);
    *dsdx = -RATIONAL_N*xn1*s*s;
    return s;
  #else
    if (fabs(x-1) < RATIONAL_WINDOW)
        return geometricRatio<RATIONAL_N, RATIONAL_M>(x, dsdx);
    real xn1 = IntPower<RATIONAL_N-1>::eval(x);
    real xm1 = IntPower<RATIONAL_M-1>::eval(x);
    #if RATIONAL_M > RATIONAL_N
    if (!isfinite(xm1*x))
        return rationalOfInverse<RATIONAL_N, RATIONAL_M>(RECIP(x), dsdx);
    #endif
    real inverse = RECIP(1-xm1*x);
    real s = (1-xn1*x)*inverse;
    *dsdx = (-RATIONAL_N*xn1+s*RATIONAL_M*xm1)*inverse;
    return s;
  #endif
#elif SWITCH_TYPE == 1
    real s = EXP(-x);
    *dsdx = -s;
    return s;
#elif SWITCH_TYPE == 2
    real s = EXP(-0.5f*x*x);
    *dsdx = -x*s;
    return s;
#elif SWITCH_TYPE == 3
    real xa1 = POW(x, p.a-1);
    real base = 1+p.c*xa1*x;
    real s = POW(base, -p.b/p.a);
    *dsdx = -p.b*p.c*xa1*s/base;
    return s;
#elif SWITCH_TYPE == 4
    if (x >= 1) {
        *dsdx = 0;
        return 0;
    }
    *dsdx = 6*x*(x-1);
    return (x-1)*(x-1)*(1+2*x);
#elif SWITCH_TYPE == 5
    real t = tanh(x);
    *dsdx = -(1-t*t);
    return 1-t;
#elif SWITCH_TYPE == 6
    if (x > 1) {
        *dsdx = 0;
        return 0;
    }
    const real pi = (real) 3.14159265358979323846;
    *dsdx = -0.5f*pi*SIN(pi*x);
    return 0.5f*(COS(pi*x)+1);
#elif SWITCH_TYPE == 8
    // 1/(1 + exp(u)) from exp(-|u|), which cannot overflow; ds/du is the same for u and -u.
    const real u = p.beta*(x-p.ref);
    const real e = EXP(-fabs(u));
    const real inverse = RECIP(1+e);
    *dsdx = -p.beta*e*inverse*inverse;
    return (u > 0 ? e*inverse : inverse);
#else
    real s, dsdxValue;
    CUSTOM_SWITCH
    *dsdx = dsdxValue;
    return s;
#endif
}

/**
 * The constant factor that switchingFunction() leaves out of g: callers multiply their sums of
 * g times a displacement by it once, rather than every pair by it.
 */
inline DEVICE real gradientScale(const PairParams& p) {
#ifdef USE_R2_ONLY
  #ifdef RATIONAL_SIMPLE
    real scale = -RATIONAL_N*p.invR0*p.invR0;
  #else
    real scale = p.invR0*p.invR0;
  #endif
#else
    real scale = p.invR0;
#endif
#ifdef STRETCH
    scale *= p.scale;
#endif
    return scale;
}

/**
 * s at squared distance r2, stretched when requested, and g such that gradientScale(p)*g =
 * (ds/dr)/r: the gradient of s with respect to the second particle of a pair is
 * gradientScale(p)*g times their displacement.
 */
inline DEVICE real switchingFunction(real r2, const PairParams& p, real* g) {
#if defined(HAS_DMAX) && !defined(USE_R2_ONLY)
    // PLUMED 2.10's values at the ends: 0 from r = dmax on; 1 up to r = d0, which Q alone evaluates.
    // dmax2 is dmax squared in the precision of the positions (CudaCoordinationCV::squaredLength):
    // a particle placed at dmax is at dmax here too.
    if (r2 >= p.dmax2) {
        *g = 0;
        return 0;
    }
#endif
    real s, gValue;
#ifdef USE_R2_ONLY
    // d0 = 0 and even exponents: x^2 = r^2/r0^2, and (ds/dx)/x gives g without a square root.
    // The products of parameters alone are written apart, so that loops compute them once.
    const real invR02 = p.invR0*p.invR0;
    real x2 = r2*invR02;
    real xn2 = IntPower<RATIONAL_N/2-1>::eval(x2);
  #ifdef RATIONAL_SIMPLE
    s = RECIP(1+xn2*x2);
    gValue = (xn2*s)*s;
  #else
    const real low = (1-RATIONAL_WINDOW)*(1-RATIONAL_WINDOW), high = (1+RATIONAL_WINDOW)*(1+RATIONAL_WINDOW);
    if (x2 > low && x2 < high) {
        // In y = x^2: (1 - y^(n/2))/(1 - y^(m/2)), and g = 2 ds/dy (gradientScale() brings 1/r0^2).
        real dsdy;
        s = geometricRatio<RATIONAL_N/2, RATIONAL_M/2>(x2, &dsdy);
        gValue = 2*dsdy;
    }
    else {
        real xm2 = IntPower<RATIONAL_M/2-1>::eval(x2);
    #if RATIONAL_M > RATIONAL_N
        if (!isfinite(xm2*x2)) {
            // x^m overflows: in 1/x^2 (rationalOfInverse()), g = 2 ds/d(x^2)
            real dsdy;
            s = rationalOfInverse<RATIONAL_N/2, RATIONAL_M/2>(RECIP(x2), &dsdy);
            gValue = 2*dsdy;
        }
        else
    #endif
        {
            real inverse = RECIP(1-xm2*x2);
            s = (1-xn2*x2)*inverse;
            gValue = (-RATIONAL_N*xn2+s*RATIONAL_M*xm2)*inverse;
        }
    }
  #endif
#else
    real r = SQRT(r2);
    real x = (r-p.d0)*p.invR0;
  #if SWITCH_TYPE == 8
    // Q evaluates r = d0 itself: tested on r^2, which for a particle placed at d0 equals d0^2
    // rounded as the positions are (the square root may round either way).
    if (r2 < p.d0*p.d0) {
  #else
    if (x <= 0) {
  #endif
        s = 1;
        gValue = 0;
    }
    else {
        real dsdx;
        s = switchX(x, p, &dsdx);
        gValue = dsdx*RECIP(r);
    }
#endif
#ifdef STRETCH
    s = s*p.scale+p.shift;
#endif
#if defined(HAS_DMAX) && defined(USE_R2_ONLY)
    // The cutoff applied after the fact: cheap enough to compute for every pair, and a select
    // rather than a branch in the pair loops. (Overflow beyond the cutoff is selected away.)
    const bool within = (r2 < p.dmax2);
    s = (within ? s : 0);
    gValue = (within ? gValue : 0);
#endif
    *g = gValue;
    return s;
}

/**
 * A pair's term of a per-atom coordination number (kernels/particles.cu, particlelists.cu,
 * particlehomes.cu): t = s(r) r^k at squared distance r2, k the distance power (the define
 * PARTICLE_DISTANCE_POWER where k != 0; without it k is 0 and the pair loops hold no power: a
 * test of k at run time would be compiled into every pair as predicated instructions), and
 * *dtdr = (dt/dr)/r with gradientScale() included, so that *dtdr times the
 * displacement from the centre to the neighbour is the gradient of t with respect to the
 * neighbour (minus it, to the centre).
 */
inline DEVICE real particleTerm(real r2, const PairParams& params, real distancePower, real* dtdr) {
    real g;
    real t = switchingFunction(r2, params, &g);
    g *= gradientScale(params);
#ifdef PARTICLE_DISTANCE_POWER
    const real rk = POW(r2, distancePower/2);
    // r = 0 (two particles at one place) adds nothing, as on the host and in PLUMED
    g = g*rk+(t == 0 || r2 == 0 ? 0 : distancePower*t*rk/r2);
    t *= rk;
#endif
    *dtdr = g;
    return t;
}
