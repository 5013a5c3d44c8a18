// The fit kernels of the integrated model (Gauss2dIntegrated), float and double (fit_launch.cuh).
#include "fit/fit_kernel_templates.cuh"

namespace nanoscopy::cuda::fit_launch {

template void launch_model<Gauss2dIntegrated, float>(const KernelArgs<float>&, const Gauss2dIntegrated&, Estimator, bool, const FitGeometry&, int,
                                      cudaStream_t);
template void launch_model<Gauss2dIntegrated, double>(const KernelArgs<double>&, const Gauss2dIntegrated&, Estimator, bool, const FitGeometry&,
                                       int, cudaStream_t);
template void preload_model<Gauss2dIntegrated, float>(Estimator);
template void preload_model<Gauss2dIntegrated, double>(Estimator);

}  // namespace nanoscopy::cuda::fit_launch
