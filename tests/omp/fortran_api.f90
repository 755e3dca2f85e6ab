! The OpenMP API from Fortran (use omp_lib): every routine gfortran's omp_lib binds to libgomp's
! omp_*_ entry points, with default INTEGER and LOGICAL arguments and, through the module's generic
! interfaces, INTEGER(8) / LOGICAL(8) ones (the _8_ entry points), CHARACTER arguments (hidden
! lengths), both lock kinds under contention, allocators, and an event fulfilled from Fortran.
! A program that loads and passes on libgomp and on weft alike; failures stop with a message.
module checks
  implicit none
contains
  include 'omp_check.inc'
end module

program fortran_api
  use omp_lib
  use checks
  implicit none
  integer :: n, i, s, count, nested_count, kind4, chunk4, nplaces, level_sum
  integer(8) :: n8, chunk8
  integer(kind=omp_sched_kind) :: kind
  integer(omp_lock_kind) :: lock
  integer(omp_nest_lock_kind) :: nest
  integer(kind=omp_allocator_handle_kind) :: al
  type(omp_alloctrait) :: traits(1)
  integer(kind=omp_event_handle_kind) :: ev
  character(len=64) :: fmt, buf
  character(len=4) :: short
  double precision :: t0, t1
  integer :: flag
  integer, allocatable :: ids(:), nums(:)
  integer(8), allocatable :: ids8(:), nums8(:)

  ! --- threads, teams, ICVs -------------------------------------------------------------------
  call omp_set_dynamic(.false.)
  call check(.not. omp_get_dynamic(), 'omp_get_dynamic after omp_set_dynamic(.false.)')
  call omp_set_dynamic(.false._8)
  call omp_set_num_threads(3)
  call check(omp_get_max_threads() == 3, 'omp_get_max_threads after omp_set_num_threads(3)')
  n8 = 2
  call omp_set_num_threads(n8)
  call check(omp_get_max_threads() == 2, 'omp_get_max_threads after omp_set_num_threads(2_8)')
  call check(omp_get_num_threads() == 1, 'omp_get_num_threads outside a region')
  call check(.not. omp_in_parallel(), 'omp_in_parallel outside a region')
  call check(omp_get_thread_num() == 0, 'omp_get_thread_num outside a region')
  call check(omp_get_num_procs() >= 1, 'omp_get_num_procs')
  call check(omp_get_level() == 0 .and. omp_get_active_level() == 0, 'levels outside a region')
  call check(omp_get_thread_limit() >= 2, 'omp_get_thread_limit')
  call check(omp_get_supported_active_levels() >= 1, 'omp_get_supported_active_levels')
  call omp_set_max_active_levels(2)
  call check(omp_get_max_active_levels() == 2, 'omp_set_max_active_levels(2)')
  n8 = 3
  call omp_set_max_active_levels(n8)
  call check(omp_get_max_active_levels() == 3, 'omp_set_max_active_levels(3_8)')
  call omp_set_nested(.true.)
  call check(omp_get_nested(), 'omp_get_nested after omp_set_nested(.true.)')
  call omp_set_nested(.true._8)
  call check(.not. omp_in_final(), 'omp_in_final outside a task')
  call check(omp_get_max_task_priority() >= 0, 'omp_get_max_task_priority')
  call check(omp_get_cancellation() .eqv. .false., 'omp_get_cancellation (OMP_CANCELLATION unset)')

  s = 0
  level_sum = 0
  !$omp parallel num_threads(2) reduction(+: s, level_sum)
  s = s + omp_get_thread_num() + 10 * omp_get_num_threads()
  level_sum = omp_get_level() + omp_get_active_level()
  if (.not. omp_in_parallel()) level_sum = level_sum + 100
  if (omp_get_ancestor_thread_num(1) /= omp_get_thread_num()) level_sum = level_sum + 1000
  if (omp_get_ancestor_thread_num(1_8) /= omp_get_thread_num()) level_sum = level_sum + 1000
  if (omp_get_team_size(1) /= 2 .or. omp_get_team_size(1_8) /= 2) level_sum = level_sum + 10000
  if (omp_get_team_size(0) /= 1 .or. omp_get_ancestor_thread_num(0) /= 0) level_sum = level_sum + 10000
  !$omp end parallel
  call check(s == 41, 'thread numbers and team size in a parallel region of 2')
  call check(level_sum == 4, 'levels, ancestors and team sizes in a parallel region of 2')

  ! --- schedule --------------------------------------------------------------------------------
  call omp_set_schedule(omp_sched_dynamic, 5)
  call omp_get_schedule(kind, chunk4)
  call check(kind == omp_sched_dynamic .and. chunk4 == 5, 'omp_get_schedule after (dynamic, 5)')
  chunk8 = 7
  call omp_set_schedule(omp_sched_guided, chunk8)
  call omp_get_schedule(kind, chunk8)
  call check(kind == omp_sched_guided .and. chunk8 == 7, 'omp_get_schedule (8) after (guided, 7_8)')
  kind4 = kind
  call check(kind4 == 3, 'omp_sched_guided is 3')

  ! --- places, binding, devices, teams ----------------------------------------------------------
  nplaces = omp_get_num_places()
  call check(nplaces >= 0, 'omp_get_num_places')
  call check(omp_get_proc_bind() >= 0, 'omp_get_proc_bind')
  if (nplaces > 0) then
    call check(omp_get_place_num_procs(0) >= 1, 'omp_get_place_num_procs(0)')
    call check(omp_get_place_num_procs(0_8) == omp_get_place_num_procs(0), 'omp_get_place_num_procs(0_8)')
    n = omp_get_place_num_procs(0)
    allocate (ids(n), ids8(n))
    call omp_get_place_proc_ids(0, ids)
    call omp_get_place_proc_ids(0_8, ids8)
    call check(all(ids >= 0) .and. all(ids8 == ids), 'omp_get_place_proc_ids (4 and 8)')
    deallocate (ids, ids8)
  end if
  call check(omp_get_place_num() >= -1, 'omp_get_place_num')
  n = omp_get_partition_num_places()
  allocate (nums(max(n, 1)), nums8(max(n, 1)))
  nums = -7
  nums8 = -7
  call omp_get_partition_place_nums(nums)
  call omp_get_partition_place_nums(nums8)
  if (n > 0) call check(all(nums(1:n) == nums8(1:n)) .and. all(nums(1:n) >= 0), 'omp_get_partition_place_nums')
  deallocate (nums, nums8)
  call check(omp_is_initial_device(), 'omp_is_initial_device on the host')
  call check(omp_get_num_devices() >= 0, 'omp_get_num_devices')
  call check(omp_get_initial_device() == omp_get_num_devices(), 'omp_get_initial_device')
  call check(omp_get_device_num() == omp_get_initial_device(), 'omp_get_device_num on the host')
  call omp_set_default_device(0)
  call check(omp_get_default_device() == 0, 'omp_set_default_device(0)')
  call omp_set_default_device(0_8)
  call check(omp_get_num_teams() == 1 .and. omp_get_team_num() == 0, 'teams queries outside teams')
  call omp_set_num_teams(4)
  call check(omp_get_max_teams() == 4, 'omp_set_num_teams(4)')
  call omp_set_num_teams(3_8)
  call check(omp_get_max_teams() == 3, 'omp_set_num_teams(3_8)')
  call omp_set_teams_thread_limit(5)
  call check(omp_get_teams_thread_limit() == 5, 'omp_set_teams_thread_limit(5)')
  call omp_set_teams_thread_limit(6_8)
  call check(omp_get_teams_thread_limit() == 6, 'omp_set_teams_thread_limit(6_8)')

  ! --- timers ----------------------------------------------------------------------------------
  t0 = omp_get_wtime()
  t1 = omp_get_wtime()
  call check(t1 >= t0 .and. omp_get_wtick() > 0d0 .and. omp_get_wtick() < 1d0, 'omp_get_wtime / omp_get_wtick')

  ! --- locks: a counter under each kind, 4 threads ------------------------------------------
  call omp_init_lock(lock)
  call omp_init_nest_lock(nest)
  count = 0
  nested_count = 0
  !$omp parallel num_threads(4)
  do i = 1, 1000
    call omp_set_lock(lock)
    count = count + 1
    call omp_unset_lock(lock)
    call omp_set_nest_lock(nest)
    call omp_set_nest_lock(nest)
    nested_count = nested_count + 1
    call omp_unset_nest_lock(nest)
    call omp_unset_nest_lock(nest)
  end do
  !$omp end parallel
  call check(count == 4000, 'counter under an omp_lock_kind lock, 4 threads x 1000')
  call check(nested_count == 4000, 'counter under an omp_nest_lock_kind lock taken twice, 4 threads x 1000')
  call check(omp_test_lock(lock), 'omp_test_lock of a free lock')
  call check(.not. omp_test_lock(lock), 'omp_test_lock of a lock held by the caller')
  call omp_unset_lock(lock)
  call check(omp_test_nest_lock(nest) == 1, 'omp_test_nest_lock of a free nest lock')
  call check(omp_test_nest_lock(nest) == 2, 'omp_test_nest_lock again by its owner')
  call omp_unset_nest_lock(nest)
  call omp_unset_nest_lock(nest)
  call omp_destroy_lock(lock)
  call omp_destroy_nest_lock(nest)

  ! --- affinity format (CHARACTER arguments) --------------------------------------------------
  call omp_set_affinity_format('T%n of %N')
  call check(omp_get_affinity_format(fmt) == 9, 'omp_get_affinity_format length')
  call check(fmt == 'T%n of %N', 'omp_get_affinity_format text (blank padded)')
  call check(omp_get_affinity_format(short) == 9 .and. short == 'T%n ', 'omp_get_affinity_format cut to the buffer')
  call check(omp_capture_affinity(buf, 'L%L') == 2 .and. buf == 'L0', 'omp_capture_affinity with a format')
  call check(omp_capture_affinity(buf, '') == 7 .and. buf == 'T0 of 1', 'omp_capture_affinity, default format')
  call omp_display_affinity('fortran_api: display of thread %n')
  call omp_display_env(.false.)
  call omp_display_env(.false._8)
  !$omp parallel num_threads(2) private(buf, n)
  n = omp_capture_affinity(buf, '%n/%N')
  if (buf /= merge('0/2', '1/2', omp_get_thread_num() == 0)) then
    !$omp atomic
    count = count + 1
  end if
  !$omp end parallel
  call check(count == 4000, 'omp_capture_affinity in a region of 2')

  ! --- allocators -------------------------------------------------------------------------
  traits(1)%key = omp_atk_alignment
  traits(1)%value = 256
  al = omp_init_allocator(omp_default_mem_space, 1, traits)
  call check(al /= omp_null_allocator, 'omp_init_allocator with alignment 256')
  call omp_set_default_allocator(al)
  call check(omp_get_default_allocator() == al, 'omp_get_default_allocator after omp_set_default_allocator')
  call omp_set_default_allocator(omp_default_mem_alloc)
  call omp_destroy_allocator(al)
  al = omp_init_allocator(omp_default_mem_space, 1_8, traits)
  call check(al /= omp_null_allocator, 'omp_init_allocator (8)')
  call omp_destroy_allocator(al)

  ! --- an event fulfilled from Fortran --------------------------------------------------------
  flag = 0
  !$omp parallel num_threads(2)
  !$omp single
  !$omp task detach(ev) shared(flag)
  !$omp atomic write
  flag = 1
  !$omp end task
  !$omp task shared(flag)
  do while (.true.)
    !$omp atomic read
    n = flag
    if (n == 1) exit
  end do
  call omp_fulfill_event(ev)
  !$omp end task
  !$omp taskwait
  !$omp end single
  !$omp end parallel
  call check(flag == 1, 'detached task fulfilled by omp_fulfill_event')

  ! --- pause: the next region starts the threads again ---------------------------------------
  call check(omp_pause_resource_all(omp_pause_soft) == 0, 'omp_pause_resource_all(soft)')
  call check(omp_pause_resource(omp_pause_soft, omp_get_initial_device()) == 0, 'omp_pause_resource(soft, host)')
  s = 0
  !$omp parallel num_threads(2) reduction(+: s)
  s = s + 1
  !$omp end parallel
  call check(s == 2, 'a region of 2 after omp_pause_resource')

  print '(a)', 'PASS fortran_api'
end program
