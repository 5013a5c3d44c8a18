// The fit kernels of the sampled model (Gauss2d), float and double (fit_launch.cuh).
#include "fit/fit_kernel_templates.cuh"

namespace nanoscopy::cuda::fit_launch {

template void launch_model<Gauss2d, float>(const KernelArgs<float>&, const Gauss2d&, Estimator, bool, const FitGeometry&, int,
                                      cudaStream_t);
template void launch_model<Gauss2d, double>(const KernelArgs<double>&, const Gauss2d&, Estimator, bool, const FitGeometry&,
                                       int, cudaStream_t);
template void preload_model<Gauss2d, float>(Estimator);
template void preload_model<Gauss2d, double>(Estimator);

}  // namespace nanoscopy::cuda::fit_launch
