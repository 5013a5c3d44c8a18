// The address of a kernel built for sm_75 only (turing_only_kernel.cu).
#pragma once

const void* turing_only_kernel_address();
