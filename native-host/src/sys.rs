//! Thin wrappers around the Linux syscalls the page-cache modules need (mincore, fadvise,
//! readahead, ioprio_set, cachestat probe). The only `unsafe` of the crate lives here.
//! OWNER: kernel helper.
