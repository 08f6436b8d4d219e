// time-spec: MergedTimeServerSpec "timeservers" -> SNTP queries -> the clock stepped
// (big offsets) or slewed (small ones) -> the RTC written -> TimeStatus "clock".
// At start the RTC is read; if the kernel did not set the clock from it already, this
// does, so a machine whose servers do not answer still boots with a sane time.
import type { Controller } from '../../cosi/controller/contract.ts';
import { layerOf } from '../../machinery/model/layers.ts';
import { sameSpec } from '../../cosi/spec/spec-equal.ts';
import { querySntp, type QueryResult } from './sntp/client.ts';
import type { SystemClock } from './system-clock.ts';
import { type TimeServerSpecSpec, type TimeStatusSpec } from './types.ts';
import { TIME_SERVERS_ID } from './timeserver-merge.ts';
import { bootClockNote, clockProblem } from '../../machinery/sys/clock-floor.ts';
import { BUILD_EPOCH_MS } from '../../machinery/version.ts';
import { MERGED_TIME_SERVER_SPEC_TYPE, TIME_NS, TIME_STATUS_TYPE } from '../../proto/gen/resource-types.ts';
import { TIME_STATUS_ID } from '../../machinery/model/singleton-ids.ts';

export interface TimeSpecOptions {
  /** Between successful syncs. */
  pollMs?: number;
  /** After every server failed. */
  retryMs?: number;
  /** Offsets at least this big are stepped; smaller ones slewed (systemd-timesyncd and chrony use similar limits). */
  stepThresholdMs?: number;
  /** Rewrite the RTC at most this often while synced (the kernel's "11 minute mode"). */
  rtcWriteMs?: number;
  queryTimeoutMs?: number;
  /** No clock before this is used (machinery/sys/clock-floor.ts); default: this build's date. */
  floorMs?: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function timeSpecController(clock: SystemClock, o: TimeSpecOptions = {}): Controller {
  const pollMs = o.pollMs ?? 64_000, retryMs = o.retryMs ?? 8_000, stepAt = o.stepThresholdMs ?? 400;
  const rtcWriteMs = o.rtcWriteMs ?? 11 * 60_000, timeoutMs = o.queryTimeoutMs ?? 2_000;
  const floorMs = o.floorMs ?? BUILD_EPOCH_MS;
  return {
    name: 'time-spec',
    inputs: () => [{ namespace: TIME_NS, type: MERGED_TIME_SERVER_SPEC_TYPE, kind: 'weak' }],
    outputs: () => [{ type: TIME_STATUS_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      const boot: Pick<TimeStatusSpec, 'rtcAtBoot' | 'rtcSetClock'> = {};
      let rtcError: string | undefined;
      let rtc: number | undefined;
      try {
        rtc = clock.readRtc();
        if (rtc !== undefined) {
          boot.rtcAtBoot = iso(rtc);
          if (clock.kernelSetFromRtc()) boot.rtcSetClock = 'kernel';
          else {
            // An RTC before the floor does not move the clock back past it (PID 1 moved it there).
            const to = Math.max(rtc, floorMs);
            clock.step(to);
            boot.rtcSetClock = 'plugin';
            ctx.log.info(`clock set from the RTC: ${iso(to)}${to > rtc ? ` (the RTC read ${iso(rtc)})` : ''}`);
          }
        }
      } catch (e) { rtcError = `RTC: ${(e as Error).message}`; }
      // An RTC that failed to read says nothing of where the clock started; none at all means it started at 1970.
      const bootNote = rtcError ? undefined : bootClockNote(rtc, floorMs);
      // Where the time comes from while no server has answered.
      const unsynced: TimeStatusSpec['source'] = boot.rtcAtBoot ? 'rtc' : 'none';

      let servers: readonly string[] = [];
      let last: (QueryResult & { at: number }) | undefined;
      let rtcWrittenAt: number | undefined;
      // The timer marks a poll as due; other wake-ups (a spec event) poll only when the
      // servers changed. No clock comparison: the clock this controller steps must not
      // move its own schedule, and a timer may fire a fraction of a ms "early".
      let pollDue = true;
      let timer: NodeJS.Timeout | undefined;
      const wakeIn = (ms: number) => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          pollDue = true;
          ctx.requestReconcile();
        }, ms);
      };
      let layer: Pick<TimeStatusSpec, 'layer'> = {};
      const put = (s: Omit<TimeStatusSpec, 'rtcAtBoot' | 'rtcSetClock'>) => {
        // Until a server sets it, a clock moved to the floor is only not before it; after, only its reading counts.
        const problem = (s.synced ? undefined : bootNote) ?? clockProblem(clock.now(), floorMs);
        return ctx.state.put<TimeStatusSpec>(
          { namespace: TIME_NS, type: TIME_STATUS_TYPE, id: TIME_STATUS_ID },
          {
            ...s, ...boot, ...(rtcWrittenAt ? { rtcWritten: iso(rtcWrittenAt) } : {}), ...layer,
            ...(floorMs > 0 ? { floor: iso(floorMs) } : {}), ...(problem ? { clockProblem: problem } : {}),
          },
        );
      };
      try {
        while (await ctx.next()) {
          const merged = await ctx.state.find({
            namespace: TIME_NS, type: MERGED_TIME_SERVER_SPEC_TYPE, id: TIME_SERVERS_ID,
          });
          const spec = merged?.metadata.phase === 'running' ? merged.spec as TimeServerSpecSpec : undefined;
          const list = spec?.servers ?? [];
          layer = spec ? { layer: layerOf(spec) } : {};
          const changed = !sameSpec(list, servers);
          servers = list;
          if (!list.length) {
            clearTimeout(timer);
            last = undefined;
            await put({
              synced: false, source: unsynced, servers: [],
              error: rtcError ?? 'no time servers configured (TimeServerSpec)',
            });
            continue;
          }
          if (!changed && !pollDue) continue; // a spec event that changed nothing for us
          pollDue = false;
          const errors: string[] = [];
          let sample: QueryResult | undefined;
          for (const server of list) {
            try {
              const answer = await querySntp(server, () => clock.now(), timeoutMs);
              const says = clock.now() + answer.offsetMs;
              if (floorMs > 0 && says < floorMs) {
                throw new Error(`${answer.server} says ${iso(says)}, before this build was made (${iso(floorMs)}): `
                  + 'not used');
              }
              sample = answer;
              break;
            } catch (e) {
              errors.push((e as Error).message);
            }
          }
          if (!sample) {
            wakeIn(retryMs);
            await put({
              synced: false, source: last ? 'sntp' : unsynced, servers: list, error: errors.join('; '),
              ...(last ? { server: last.server, lastSync: iso(last.at), offsetMs: last.offsetMs } : {}),
            });
            continue;
          }
          let correction: 'step' | 'slew';
          try {
            if (Math.abs(sample.offsetMs) >= stepAt) {
              clock.step(clock.now() + sample.offsetMs);
              correction = 'step';
            }
            else {
              clock.slew(sample.offsetMs);
              correction = 'slew';
            }
          } catch (e) {
            wakeIn(retryMs);
            await put({
              synced: false, source: unsynced, servers: list, server: sample.server, offsetMs: sample.offsetMs,
              error: `setting the clock: ${(e as Error).message}`,
            });
            continue;
          }
          if (correction === 'step') ctx.log.info(`clock stepped by ${(sample.offsetMs / 1000).toFixed(3)} s`
            + ` from ${sample.server} (stratum ${sample.stratum})`);
          const now = clock.now();
          last = { ...sample, at: now };
          let rtcWriteError: string | undefined;
          if (boot.rtcAtBoot && (correction === 'step' || !rtcWrittenAt || now - rtcWrittenAt >= rtcWriteMs)) {
            try {
              clock.writeRtc(now);
              rtcWrittenAt = now;
            } catch (e) {
              rtcWriteError = `writing the RTC: ${(e as Error).message}`;
            }
          }
          wakeIn(pollMs);
          await put({
            synced: true, source: 'sntp', servers: list, server: sample.server, stratum: sample.stratum,
            offsetMs: Math.round(sample.offsetMs * 1000) / 1000, delayMs: Math.round(sample.delayMs * 1000) / 1000,
            correction, lastSync: iso(now),
            ...(errors.length || rtcWriteError
              ? { error: [...errors, ...(rtcWriteError ? [rtcWriteError] : [])].join('; ') } : {}),
          });
        }
      } finally { clearTimeout(timer); }
    },
  };
}
