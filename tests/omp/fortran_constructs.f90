! OpenMP constructs as gfortran compiles them (its own lowering of the GOMP ABI: array reductions,
! workshare, copyprivate of arrays, threadprivate module variables with copyin, doacross loops,
! tasks with dependences, taskloop), each checked against the value a serial run gives.
module shared_state
  implicit none
  integer :: tp = -1
  !$omp threadprivate(tp)
contains
  include 'omp_check.inc'

  recursive integer function fib(n) result(r)
    integer, intent(in) :: n
    integer :: a, b
    if (n < 2) then
      r = n
      return
    end if
    !$omp task shared(a) firstprivate(n) untied
    a = fib(n - 1)
    !$omp end task
    !$omp task shared(b) firstprivate(n)
    b = fib(n - 2)
    !$omp end task
    !$omp taskwait
    r = a + b
  end function
end module

program fortran_constructs
  use omp_lib
  use shared_state
  implicit none
  integer, parameter :: n = 1000
  integer :: i, j, k, total, last, fsum, wrong
  integer :: hist(8), cells(n), seen(n), grid(64, 64)
  double precision :: a(n), b(n), dot
  integer :: bcast(4)
  integer :: chain(0:200)
  integer, pointer :: pcells(:)

  ! --- parallel do: each schedule, scalar and array reductions, lastprivate ------------------
  total = 0
  hist = 0
  !$omp parallel do schedule(dynamic, 7) reduction(+: total, hist) lastprivate(last)
  do i = 1, n
    total = total + i
    hist(mod(i, 8) + 1) = hist(mod(i, 8) + 1) + 1
    last = i
  end do
  !$omp end parallel do
  call check(total == n * (n + 1) / 2, 'parallel do reduction (dynamic)')
  call check(all(hist == n / 8) .and. last == n, 'array reduction and lastprivate')

  call omp_set_schedule(omp_sched_guided, 3)
  seen = 0
  !$omp parallel do schedule(runtime)
  do i = 1, n
    seen(i) = seen(i) + 1
  end do
  !$omp end parallel do
  call check(all(seen == 1), 'schedule(runtime) guided,3: every iteration once')

  grid = 0
  !$omp parallel do collapse(2) schedule(static, 5)
  do j = 1, 64
    do i = 1, 64
      grid(i, j) = i + 64 * j
    end do
  end do
  !$omp end parallel do
  call check(sum(grid) == sum([(sum([(i + 64 * j, i = 1, 64)]), j = 1, 64)]), 'collapse(2)')

  ! --- workshare: array syntax, where, sum ---------------------------------------------------
  a = [(dble(i), i = 1, n)]
  !$omp parallel
  !$omp workshare
  b = 2d0 * a
  where (b > 1000d0) b = 0d0
  dot = sum(a * b)
  !$omp end workshare
  !$omp end parallel
  call check(abs(dot - sum([(merge(0d0, 2d0 * i * i, 2 * i > 1000), i = 1, n)])) < 1d-6, 'workshare')

  ! --- single copyprivate of an array, critical, atomic, master, barrier ----------------------
  wrong = 0
  fsum = 0
  !$omp parallel private(bcast) num_threads(3)
  !$omp single
  bcast = [1, 2, 3, omp_get_num_threads()]
  !$omp end single copyprivate(bcast)
  if (any(bcast(1:3) /= [1, 2, 3]) .or. bcast(4) /= omp_get_num_threads()) then
    !$omp atomic
    wrong = wrong + 1
  end if
  !$omp critical (sum_lock)
  fsum = fsum + omp_get_thread_num() + 1
  !$omp end critical (sum_lock)
  !$omp barrier
  !$omp master
  if (fsum /= omp_get_num_threads() * (omp_get_num_threads() + 1) / 2) wrong = wrong + 100
  !$omp end master
  !$omp end parallel
  call check(wrong == 0, 'single copyprivate, critical, master')

  ! --- sections -----------------------------------------------------------------------------
  hist = 0
  !$omp parallel sections
  !$omp section
  hist(1) = 1
  !$omp section
  hist(2) = 2
  !$omp section
  hist(3) = 3
  !$omp end parallel sections
  call check(all(hist(1:3) == [1, 2, 3]), 'parallel sections')

  ! --- threadprivate module variable and copyin --------------------------------------------
  tp = 42
  wrong = 0
  !$omp parallel copyin(tp) num_threads(2) reduction(+: wrong)
  if (tp /= 42) wrong = wrong + 1
  tp = 100 + omp_get_thread_num()
  !$omp end parallel
  call check(wrong == 0, 'copyin of a threadprivate module variable')
  call check(tp == 100, 'the initial thread keeps its threadprivate copy')

  ! --- ordered and doacross loops --------------------------------------------------------
  k = 0
  wrong = 0
  !$omp parallel do ordered schedule(dynamic, 3)
  do i = 1, 200
    !$omp ordered
    if (k /= i - 1) wrong = wrong + 1
    k = i
    !$omp end ordered
  end do
  !$omp end parallel do
  call check(wrong == 0 .and. k == 200, 'ordered loop')

  chain = 0
  chain(0) = 1
  !$omp parallel do ordered(1) schedule(static, 1)
  do i = 1, 200
    !$omp ordered depend(sink: i - 1)
    chain(i) = chain(i - 1) + 1
    !$omp ordered depend(source)
  end do
  !$omp end parallel do
  call check(all(chain == [(i + 1, i = 0, 200)]), 'doacross loop (ordered depend sink/source)')

  ! --- tasks: recursive fork-join, dependences, taskloop, taskgroup --------------------------
  !$omp parallel
  !$omp single
  k = fib(20)
  !$omp end single
  !$omp end parallel
  call check(k == 6765, 'recursive tasks: fib(20)')

  cells = 0
  !$omp parallel
  !$omp single
  do i = 1, 50
    !$omp task depend(inout: cells(1)) firstprivate(i)
    if (cells(1) == i - 1) cells(1) = i
    !$omp end task
    !$omp task depend(in: cells(1)) depend(out: cells(i + 1)) firstprivate(i)
    cells(i + 1) = cells(1)
    !$omp end task
  end do
  !$omp taskwait
  !$omp end single
  !$omp end parallel
  call check(cells(1) == 50 .and. all(cells(2:51) == [(i, i = 1, 50)]), 'tasks with depend(in/out/inout)')

  total = 0
  !$omp parallel
  !$omp single
  !$omp taskgroup
  !$omp taskloop grainsize(16) shared(seen)
  do i = 1, n
    seen(i) = 2 * i
  end do
  !$omp end taskloop
  !$omp end taskgroup
  !$omp end single
  !$omp end parallel
  call check(all(seen == [(2 * i, i = 1, n)]), 'taskloop in a taskgroup')

  ! --- nested regions ---------------------------------------------------------------------
  call omp_set_max_active_levels(2)
  wrong = 0
  !$omp parallel num_threads(2) reduction(+: wrong)
  !$omp parallel num_threads(2) reduction(+: wrong)
  if (omp_get_level() /= 2 .or. omp_get_active_level() /= 2 .or. omp_get_num_threads() /= 2) wrong = wrong + 1
  if (omp_get_ancestor_thread_num(2) /= omp_get_thread_num()) wrong = wrong + 1
  !$omp end parallel
  !$omp end parallel
  call check(wrong == 0, 'nested regions: levels, team sizes, ancestors')

  ! --- target on the host: an absent OPTIONAL array named in has_device_addr ----------------
  call on_target()
  allocate (pcells(10))
  pcells = 0
  call on_target(pcells)
  call check(all(pcells == 7), 'target has_device_addr of a present OPTIONAL array')
  deallocate (pcells)

  print '(a)', 'PASS fortran_constructs'
contains
  ! gcc passes the descriptor of an absent OPTIONAL as a null firstprivate address.
  subroutine on_target(c)
    integer, optional, pointer :: c(:)
    !$omp target has_device_addr(c)
    if (present(c)) c = 7
    !$omp end target
  end subroutine
end program
