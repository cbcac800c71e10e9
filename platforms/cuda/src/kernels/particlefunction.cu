/**
 * The function F(c_1, ..., c_N) of per-atom coordination numbers that a CV with a particle
 * function is, and its weights w_a = dF/dc_a, on one block (kernels/particles.cu computes the c_a
 * before and the gradient after): the formulas of CoordinationParticleFunction on the host, in
 * double precision.
 */

/**
 * The particle function's parameters (CudaCoordinationCV::ParticleFunctionParams: the same
 * members in the same order): Between's bounds and width (smear times U - L), beta of Min and Max,
 * the Rational threshold of MoreThan and LessThan (r0, d0, cutoff, stretch scale and shift,
 * exponents n and m), the function (CoordinationForce::ParticleFunction), the number of
 * coordination numbers, the power of Moment.
 */
typedef struct {
    double lower, upper, width, beta, r0, d0, dmax, scale, shift;
    int function, numCenters, n, m, power;
} ParticleFunctionParams;

/** Sum a double over the threads of a block of PARTICLE_FUNCTION_THREADS threads; every thread gets the result. */
inline DEVICE double particleBlockSum(double value, double* scratch) {
    scratch[threadIdx.x] = value;
    __syncthreads();
    for (int half = PARTICLE_FUNCTION_THREADS/2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            scratch[threadIdx.x] += scratch[threadIdx.x+half];
        __syncthreads();
    }
    const double total = scratch[0];
    __syncthreads();
    return total;
}

/** The largest of a double over the threads of a block of PARTICLE_FUNCTION_THREADS threads; every thread gets the result. */
inline DEVICE double particleBlockMax(double value, double* scratch) {
    scratch[threadIdx.x] = value;
    __syncthreads();
    for (int half = PARTICLE_FUNCTION_THREADS/2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            scratch[threadIdx.x] = max(scratch[threadIdx.x], scratch[threadIdx.x+half]);
        __syncthreads();
    }
    const double result = scratch[0];
    __syncthreads();
    return result;
}

/**
 * The first entry of the smallest (lowest) or largest c of c[0..n), as the host's loop finds it, by
 * a block of PARTICLE_FUNCTION_THREADS threads (scratch: one int per thread); every thread gets it.
 */
inline DEVICE int particleBestIndex(const double* RESTRICT c, int n, bool lowest, int* scratch) {
    int localBest = -1;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        if (localBest < 0 || (lowest ? c[i] < c[localBest] : c[i] > c[localBest]))
            localBest = i;
    scratch[threadIdx.x] = localBest;
    __syncthreads();
    for (int half = PARTICLE_FUNCTION_THREADS/2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            const int a = scratch[threadIdx.x], b = scratch[threadIdx.x+half];
            if (b >= 0 && (a < 0 || (lowest ? c[b] < c[a] : c[b] > c[a]) || (c[b] == c[a] && b < a)))
                scratch[threadIdx.x] = b;
        }
        __syncthreads();
    }
    const int best = scratch[0];
    __syncthreads();
    return best;
}

/** x^k for an integer k >= 0 by repeated squaring, as CoordinationSwitching computes it on the host. */
inline DEVICE double particleIntPower(double x, int k) {
    double result = 1;
    while (k > 0) {
        if (k & 1)
            result *= x;
        x *= x;
        k >>= 1;
    }
    return result;
}

/**
 * The threshold of MoreThan and LessThan: PLUMED's RATIONAL of c, as CoordinationSwitching
 * evaluates it (1 up to d0, 0 from its cutoff on, stretched there, the ratio of geometric sums
 * within RationalWindow of x = 1 where m != 2n), with dt/dc in *dtdc.
 */
inline DEVICE double particleThreshold(double c, const ParticleFunctionParams& p, double* dtdc) {
    *dtdc = 0;
    if (c >= p.dmax)
        return 0;
    const double x = (c-p.d0)/p.r0;
    if (x <= 0)
        return 1;
    double s, dsdx;
    if (p.m == 2*p.n) {
        const double xn1 = particleIntPower(x, p.n-1);
        s = 1/(1+xn1*x);
        dsdx = -p.n*xn1*s*s;
    }
    else if (fabs(x-1) < PARTICLE_RATIONAL_WINDOW) {
        double num = 0, dnum = 0, den = 0, dden = 0;
        for (int k = p.n-1; k >= 0; k--) {
            dnum = dnum*x+num;
            num = num*x+1;
        }
        for (int k = p.m-1; k >= 0; k--) {
            dden = dden*x+den;
            den = den*x+1;
        }
        dsdx = (dnum*den-num*dden)/(den*den);
        s = num/den;
    }
    else {
        const double xn1 = particleIntPower(x, p.n-1), xm1 = particleIntPower(x, p.m-1);
        if (p.m > p.n && !isfinite(xm1*x)) {
            // x^m overflows: in y = 1/x, as CoordinationSwitching::evaluateRational (not inf/inf)
            const double y = 1/x, ymn = particleIntPower(y, p.m-p.n), inverse = 1/(1-particleIntPower(y, p.m));
            s = ymn*(1-particleIntPower(y, p.n))*inverse;
            dsdx = (p.n*ymn*y-s*p.m*y)*inverse;
        }
        else {
            const double inverse = 1/(1-xm1*x);
            s = (1-xn1*x)*inverse;
            dsdx = (-p.n*xn1+s*p.m*xm1)*inverse;
        }
    }
    *dtdc = dsdx*p.scale/p.r0;
    return s*p.scale+p.shift;
}

/** Whether F is a sum of terms f(c_a), each weight w_a = f'(c_a) its own term's: Sum, Mean, MoreThan, LessThan, Between. */
inline DEVICE bool particleFunctionIsElementwise(const ParticleFunctionParams& p) {
    return (p.function >= 1 && p.function <= 5);
}

/**
 * The term f(c) of an elementwise F (particleFunctionIsElementwise()) for one coordination
 * number, and its weight df/dc in *w: c (Sum), c/N (Mean), 1 - t(c) (MoreThan), t(c) (LessThan),
 * the Gaussian integral over [lower, upper] (Between).
 */
inline DEVICE double particleFunctionTerm(double c, const ParticleFunctionParams& p, double* w) {
    if (p.function == 1 || p.function == 2) {
        const double scale = (p.function == 2 ? 1.0/p.numCenters : 1.0);
        *w = scale;
        return scale*c;
    }
    if (p.function == 5) {
        const double norm = 1/(sqrt(2.0)*p.width), dnorm = 1/(sqrt(2*3.141592653589793)*p.width);
        const double low = (p.lower-c)*norm, up = (p.upper-c)*norm;
        *w = (exp(-low*low)-exp(-up*up))*dnorm;
        return 0.5*(erf(up)-erf(low));
    }
    double dtdc;
    const double t = particleThreshold(c, p, &dtdc);
    *w = (p.function == 3 ? -dtdc : dtdc);
    return (p.function == 3 ? 1-t : t);
}

/**
 * F(c) and w[a] = dF/dc_a, one block of PARTICLE_FUNCTION_THREADS threads, with the formulas of
 * CoordinationParticleFunction::evaluate() in double precision; then c[] is cleared for the next
 * computeParticleNumbers(). F goes where the flags say (kernels/sums.cu): ACCUMULATE adds it to
 * *cvSum (the chain rule's sum), REDUCE stores it in *cvValue, BLOCK_ENERGY adds it to the energy
 * (recording it where it is not finite, recordNonFinite()).
 */
KERNEL void __launch_bounds__(PARTICLE_FUNCTION_THREADS) evaluateParticleFunction(double* RESTRICT c, double* RESTRICT w,
        ParticleFunctionParams p, int flags, mixed* RESTRICT energyBuffer, double* RESTRICT cvSum, double* RESTRICT cvValue,
        double* RESTRICT record, int* RESTRICT alarm) {
    __shared__ double scratch[PARTICLE_FUNCTION_THREADS];
    __shared__ int sBest[PARTICLE_FUNCTION_THREADS];
    DEPENDENT_KERNEL_START
    const int n = p.numCenters;
    double value = 0;
    // First what the weights need: sums, the largest term, the best entry.
    double top = 0, sum = 0, mean = 0, dev = 0;
    int best = 0;
    bool atLimit = false;     // Min or Max at its limit, the lowest or highest c (weight 1 there)
    if (particleFunctionIsElementwise(p)) {
        // Each term's weight needs nothing else: written here, by the thread that reads it again below.
        double local = 0;
        for (int i = threadIdx.x; i < n; i += blockDim.x)
            local += particleFunctionTerm(c[i], p, &w[i]);
        value = particleBlockSum(local, scratch);
    }
    else if (p.function == 10) {
        double local = 0;
        for (int i = threadIdx.x; i < n; i += blockDim.x)
            local += c[i];
        mean = particleBlockSum(local, scratch)/n;
        double localValue = 0, localDev = 0;
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            localValue += pow(c[i]-mean, (double) p.power)/n;
            localDev += pow(c[i]-mean, (double) (p.power-1))/n;
        }
        value = particleBlockSum(localValue, scratch);
        dev = particleBlockSum(localDev, scratch);
    }
    else if (p.function == 6 || p.function == 7) {
        // Min: beta/log(S), S = sum exp(beta/c_i), 0 (zero gradient) where a c_i is 0; Max: beta log(sum exp(c_i/beta));
        // both factored by the largest exponent, so that nothing overflows.
        double localTop = __longlong_as_double(0xfff0000000000000LL), nonPositive = 0;
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            localTop = max(localTop, p.function == 6 ? p.beta/c[i] : c[i]/p.beta);
            nonPositive += (c[i] <= 0 ? 1 : 0);
        }
        top = particleBlockMax(localTop, scratch);
        nonPositive = particleBlockSum(nonPositive, scratch);
        if (!(p.function == 6 && nonPositive > 0) && !isfinite(top)) {
            // beta/c_min (Min) or c_max/beta (Max) overflows: the limit, c_min or c_max, whose weight is 1 (as the host's).
            best = particleBestIndex(c, n, p.function == 6, sBest);
            value = c[best];
            atLimit = true;
        }
        else {
            double local = 0;
            for (int i = threadIdx.x; i < n; i += blockDim.x)
                local += exp((p.function == 6 ? p.beta/c[i] : c[i]/p.beta)-top);
            sum = particleBlockSum(local, scratch);
            if (p.function == 7)
                value = p.beta*(top+log(sum));
            else if (nonPositive > 0)
                sum = 0;
            else
                value = p.beta/(top+log(sum));
        }
    }
    else {
        // Lowest, Highest: the first entry of the smallest or largest c, as the host's loop finds it.
        best = particleBestIndex(c, n, p.function == 8, sBest);
        value = c[best];
    }
    // The weights, and c[] cleared (every read of c[] above is behind a barrier of the reductions).
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const double ci = c[i];
        double weight = 0;
        switch (p.function) {
            case 1:
            case 2:
            case 3:
            case 4:
            case 5: weight = w[i]; break;
            // Min: p_i (F/c_i)^2, p_i = exp(beta/c_i - top)/sum, which does not underflow where F^2 and c_i^2 do
            case 6: weight = (atLimit ? (i == best ? 1 : 0) : sum == 0 ? 0 : exp(p.beta/ci-top)*(value/ci)*(value/ci)/sum); break;
            case 7: weight = (atLimit ? (i == best ? 1 : 0) : exp(ci/p.beta-top)/sum); break;
            case 8:
            case 9: weight = (i == best ? 1 : 0); break;
            case 10: weight = p.power*(pow(ci-mean, (double) (p.power-1))-dev)/n; break;
        }
        w[i] = weight;
        c[i] = 0;
    }
    if (threadIdx.x != 0)
        return;
    if (flags & FLAG_BLOCK_ENERGY) {
        double cv = value, energy = value, derivative = 1;
        recordNonFinite(record, 1, &cv, &energy, &derivative, alarm);
        atomicAdd(&energyBuffer[0], (mixed) energy);
    }
    if (flags & FLAG_ACCUMULATE)
        atomicAdd(cvSum, value);
    if (flags & FLAG_REDUCE)
        *cvValue = value;
}
