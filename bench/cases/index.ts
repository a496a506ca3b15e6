/** Every bench case, in the order the table prints them. Add a case: one file here, one line below. */
import type { BenchCase } from '../table.js';
import { agents } from './agents.js';
import { capacity } from './capacity.js';
import { chooseManyRooms } from './choose-many-rooms.js';
import { chooseOneRoom } from './choose-one-room.js';
import { commitNotices } from './commit-notices.js';
import { floors } from './floors.js';
import { handoff } from './handoff.js';
import { history } from './history.js';
import { hotRoom } from './hot-room.js';
import { idle } from './idle.js';
import { longPolls } from './long-polls.js';
import { mcp } from './mcp.js';
import { passwordStorm } from './password-storm.js';
import { redisFootprint } from './redis-footprint.js';
import { sse } from './sse.js';
import { startup } from './startup.js';
import { tlog } from './tlog.js';

export const cases: BenchCase[] = [
  floors,
  chooseOneRoom,
  chooseManyRooms,
  mcp,
  hotRoom,
  sse,
  longPolls,
  handoff,
  history,
  redisFootprint,
  commitNotices,
  startup,
  idle,
  agents,
  tlog,
  passwordStorm,
  capacity,
];
