#pragma once
/// KVPLAN_API marks what libkvplan exports. The library is built with hidden visibility, so only
/// the functions and types declared with it in include/kvplan/ are its supported C++ API.

#if defined(KVPLAN_STATIC_DEFINE) || !defined(__GNUC__)
#define KVPLAN_API
#else
#define KVPLAN_API __attribute__((visibility("default")))
#endif
