/** What operations may use: the runtime, the store, keys, clock and settings. Built once in app.ts. */
import type { AuthSettings } from '../auth/caller.js';
import type { Keyring } from '../receipts/index.js';
import type { Clock } from '../runtime/clock.js';
import type { RoomRegistry } from '../runtime/registry.js';
import type { RoomStore } from '../store/port.js';

export interface ServiceInfo {
  name: string;
  version: string;
  operatorName: string;
  operatorContact: string;
}

export interface Services {
  registry: RoomRegistry;
  store: RoomStore;
  keyring: Keyring;
  clock: Clock;
  baseUrl: string;
  auth: AuthSettings;
  info: ServiceInfo;
}
