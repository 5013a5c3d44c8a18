// The fit kernels of the elliptical model (Gauss2dElliptical), float and double (fit_launch.cuh).
#include "fit/fit_kernel_templates.cuh"

namespace nanoscopy::cuda::fit_launch {

template void launch_model<Gauss2dElliptical, float>(const KernelArgs<float>&, const Gauss2dElliptical&, Estimator, bool, const FitGeometry&, int,
                                      cudaStream_t);
template void launch_model<Gauss2dElliptical, double>(const KernelArgs<double>&, const Gauss2dElliptical&, Estimator, bool, const FitGeometry&,
                                       int, cudaStream_t);
template void preload_model<Gauss2dElliptical, float>(Estimator);
template void preload_model<Gauss2dElliptical, double>(Estimator);

}  // namespace nanoscopy::cuda::fit_launch
