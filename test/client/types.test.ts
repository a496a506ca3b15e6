/**
 * The client's wire types are generated from the operation schemas (scripts/client-types.ts writes
 * src/client/types/generated.ts), so nothing of the server reaches the published declarations. These
 * type assertions tie them, and the few the client writes itself (receipt payloads, client-side
 * error codes), to the server's own types: a field renamed, added or made required on one side
 * fails `npm run typecheck` (which compiles this file). The runtime part only keeps vitest from
 * reporting an empty file.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type * as W from '../../src/client/index.js';
import type { ConclaveClient } from '../../src/client/index.js';
import { DEFAULT_ROOM_CONFIG, type roomConfigSchema } from '../../src/domain/config.js';
import type { EventType as ServerEventType } from '../../src/engagement/event-types.js';
import type { ErrorCode as ServerErrorCode } from '../../src/errors.js';
import type { AuthorityConfig, RoomConfig as ServerRoomConfig, Role, Stance } from '../../src/domain/types.js';
import type { CanonicalBallot, MechanismName, Outcome as EngineOutcome } from '../../src/mechanisms/types.js';
import type { abstain } from '../../src/operations/abstain.js';
import type { ask } from '../../src/operations/ask.js';
import type { choose } from '../../src/operations/choose.js';
import type { closeRoom } from '../../src/operations/close-room.js';
import type { createRoom } from '../../src/operations/create-room.js';
import type { deleteRoom } from '../../src/operations/delete-room.js';
import type { discuss } from '../../src/operations/discuss.js';
import type { createInvite } from '../../src/operations/invites.js';
import type { joinRoom } from '../../src/operations/join-room.js';
import type { listEvents } from '../../src/operations/list-events.js';
import type { updateMemberRole } from '../../src/operations/members.js';
import type { nextAction } from '../../src/operations/next-action.js';
import type { propose } from '../../src/operations/propose.js';
import type { getRoomMachine } from '../../src/operations/room-machine.js';
import type { updateRoomSettings } from '../../src/operations/settings.js';
import type { startChoosing } from '../../src/operations/start-choosing.js';
import type { listWebhooks, registerWebhook } from '../../src/operations/webhooks.js';
import type {
  ConclusionReceiptPayload,
  DecisionReceiptPayload,
  ReceiptAbstention,
  ReceiptOutcome,
  ReceiptVote,
} from '../../src/receipts/payload.js';

/** Every key of every member of a union. */
type Keys<T> = T extends unknown ? keyof T : never;
/** The keys a value must have. */
type RequiredKeys<T> = T extends unknown ? { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T] : never;
/** The request fields of an operation: its input without the path parameters. */
type Fields<O extends { input: z.ZodType }, Path extends string = 'slug'> = Omit<z.input<O['input']>, Path>;
type Out<O extends { output: z.ZodType }> = z.output<O['output']>;
type Resolved<F> = F extends (...args: never[]) => Promise<infer R> ? R : never;

describe('client wire types', () => {
  it('name the same request fields as the server, required where the server requires them', () => {
    expectTypeOf<Keys<W.CreateRoomRequest>>().toEqualTypeOf<Keys<Fields<typeof createRoom>>>();
    expectTypeOf<Keys<W.JoinRoomRequest>>().toEqualTypeOf<Keys<Fields<typeof joinRoom>>>();
    expectTypeOf<Keys<W.AskRequest>>().toEqualTypeOf<Keys<Fields<typeof ask>>>();
    expectTypeOf<RequiredKeys<W.AskRequest>>().toEqualTypeOf<RequiredKeys<Fields<typeof ask>>>();
    expectTypeOf<Keys<W.StartChoosingRequest>>().toEqualTypeOf<Keys<Fields<typeof startChoosing>>>();
    expectTypeOf<Keys<W.DiscussRequest>>().toEqualTypeOf<Keys<Fields<typeof discuss>>>();
    expectTypeOf<RequiredKeys<W.DiscussRequest>>().toEqualTypeOf<RequiredKeys<Fields<typeof discuss>>>();
    expectTypeOf<Keys<W.ProposeRequest>>().toEqualTypeOf<Keys<Fields<typeof propose>>>();
    expectTypeOf<RequiredKeys<W.ProposeRequest>>().toEqualTypeOf<RequiredKeys<Fields<typeof propose>>>();
    expectTypeOf<Keys<W.ChooseRequest>>().toEqualTypeOf<Keys<Fields<typeof choose>>>();
    expectTypeOf<Keys<W.AbstainRequest>>().toEqualTypeOf<Keys<Fields<typeof abstain>>>();
    expectTypeOf<RequiredKeys<W.AbstainRequest>>().toEqualTypeOf<RequiredKeys<Fields<typeof abstain>>>();
    expectTypeOf<Keys<W.CloseRoomRequest>>().toEqualTypeOf<Keys<Fields<typeof closeRoom>>>();
    expectTypeOf<Keys<W.CreateInviteRequest>>().toEqualTypeOf<Keys<Fields<typeof createInvite>>>();
    expectTypeOf<RequiredKeys<W.CreateInviteRequest>>().toEqualTypeOf<RequiredKeys<Fields<typeof createInvite>>>();
    expectTypeOf<Keys<W.UpdateMemberRoleRequest>>().toEqualTypeOf<
      Keys<Fields<typeof updateMemberRole, 'slug' | 'participant'>>
    >();
    expectTypeOf<Keys<W.UpdateRoomSettingsRequest>>().toEqualTypeOf<Keys<Fields<typeof updateRoomSettings>>>();
    expectTypeOf<Keys<W.AwaitNextActionRequest>>().toEqualTypeOf<Keys<Fields<typeof nextAction>>>();
    expectTypeOf<Keys<W.ListEventsRequest>>().toEqualTypeOf<Keys<Fields<typeof listEvents>>>();
    expectTypeOf<Keys<W.RegisterWebhookRequest>>().toEqualTypeOf<Keys<Fields<typeof registerWebhook>>>();
    expectTypeOf<RequiredKeys<W.RegisterWebhookRequest>>().toEqualTypeOf<
      RequiredKeys<Fields<typeof registerWebhook>>
    >();
  });

  it('match the server’s typed responses', () => {
    expectTypeOf<Out<typeof choose>>().toExtend<W.ChooseResponse>();
    expectTypeOf<keyof W.ChooseResponse>().toEqualTypeOf<keyof Out<typeof choose>>();
    expectTypeOf<Out<typeof abstain>>().toExtend<W.AbstainResponse>();
    expectTypeOf<keyof W.AbstainResponse>().toEqualTypeOf<keyof Out<typeof abstain>>();
    expectTypeOf<Out<typeof closeRoom>>().toEqualTypeOf<W.CloseRoomResponse>();
    expectTypeOf<Out<typeof discuss>>().toEqualTypeOf<W.DiscussResponse>();
    expectTypeOf<Out<typeof propose>>().toEqualTypeOf<W.ProposeResponse>();
    expectTypeOf<Out<typeof deleteRoom>>().toEqualTypeOf<W.DeleteRoomResponse>();
    expectTypeOf<keyof W.JoinRoomResponse>().toEqualTypeOf<keyof Out<typeof joinRoom>>();
    expectTypeOf<keyof W.CreateRoomResponse>().toEqualTypeOf<keyof Out<typeof createRoom>>();
    expectTypeOf<Out<typeof registerWebhook>>().toEqualTypeOf<W.RegisterWebhookResponse>();
    expectTypeOf<Out<typeof listWebhooks>>().toEqualTypeOf<W.ListWebhooksResponse>();
    expectTypeOf<Out<typeof getRoomMachine>>().toEqualTypeOf<W.RoomMachine>();
    expectTypeOf<keyof W.ListEventsResponse>().toEqualTypeOf<keyof Out<typeof listEvents>>();
    expectTypeOf<keyof W.RoomEvent>().toEqualTypeOf<keyof Out<typeof listEvents>['events'][number]>();
    expectTypeOf<keyof W.UpdateRoomSettingsResponse>().toEqualTypeOf<keyof Out<typeof updateRoomSettings>>();
  });

  it('close RoomConfig over the server’s keys, and list its mechanisms, event types and error codes', () => {
    expectTypeOf<keyof W.RoomConfig>().toEqualTypeOf<keyof z.output<typeof roomConfigSchema>>();
    expectTypeOf<W.Mechanism>().toEqualTypeOf<MechanismName>();
    // A typed ballot for every mechanism the service runs, and none it does not (src/client/ballots.ts).
    expectTypeOf<keyof W.BallotByMechanism>().toEqualTypeOf<MechanismName>();
    expectTypeOf<W.EventType>().toEqualTypeOf<ServerEventType>();
    expectTypeOf<W.ProtocolErrorCode>().toEqualTypeOf<Exclude<ServerErrorCode, `vendor:${string}`>>();
    expectTypeOf<ServerErrorCode>().toExtend<W.ErrorCode>();
    expectTypeOf<W.ConclaveError['code']>().toEqualTypeOf<W.ErrorCode>();
    expectTypeOf(DEFAULT_ROOM_CONFIG).toExtend<W.RoomConfig>();
  });

  it('agree with the server’s domain types where both name the same thing', () => {
    expectTypeOf<W.RoomConfig>().toEqualTypeOf<ServerRoomConfig>();
    expectTypeOf<W.AuthorityConfig>().toEqualTypeOf<AuthorityConfig>();
    expectTypeOf<W.Role>().toEqualTypeOf<Role>();
    expectTypeOf<W.Stance>().toEqualTypeOf<Stance>();
    expectTypeOf<NonNullable<W.DecisionSummary['resolved_outcome']>>().toEqualTypeOf<EngineOutcome>();
    expectTypeOf<W.ChooseResponse['cast_choice']>().toEqualTypeOf<CanonicalBallot>();
  });

  it('state what the schemas state: known sets as unions, a wait answer per status, settings without the fixed keys', () => {
    type Wait<S extends W.AwaitNextActionResponse['status']> = Extract<W.AwaitNextActionResponse, { status: S }>;
    expectTypeOf<Wait<'activity'>['for']>().toEqualTypeOf<'activity'>();
    expectTypeOf<Wait<'actionable'>['decision']>().toEqualTypeOf<W.WaitDecision>();
    expectTypeOf<Wait<'timeout'>['hint']>().toEqualTypeOf<string>();
    expectTypeOf<NonNullable<W.DeltaEntry['stance']>>().toEqualTypeOf<Stance>();
    expectTypeOf<NonNullable<W.DeltaEntry['role']>>().toEqualTypeOf<Role>();
    expectTypeOf<NonNullable<W.DeltaEntry['outcome']>>().toEqualTypeOf<NonNullable<W.OutcomeStatus>>();
    expectTypeOf<NonNullable<W.RoomState['discussion'][number]['stance']>>().toEqualTypeOf<Stance>();
    expectTypeOf<W.UpdateRoomSettingsResponse['changed'][number]>().toEqualTypeOf<keyof W.RoomSettingsPatch>();
    // IMMUTABLE_KEYS (src/domain/config.ts): fixed at creation.
    expectTypeOf<keyof W.RoomSettingsPatch>().toEqualTypeOf<
      Exclude<keyof W.RoomConfig, 'type' | 'visibility' | 'mechanism'>
    >();
    expectTypeOf<W.ServiceDocument['mechanisms_supported'][number]>().toEqualTypeOf<MechanismName>();
  });

  it('write the receipt payloads as the server signs them', () => {
    expectTypeOf<W.DecisionReceipt>().toEqualTypeOf<DecisionReceiptPayload>();
    expectTypeOf<ConclusionReceiptPayload>().toExtend<W.ConclusionReceipt>();
    expectTypeOf<keyof W.ConclusionReceipt['svc']>().toEqualTypeOf<keyof ConclusionReceiptPayload['svc']>();
    expectTypeOf<W.ReceiptVote>().toEqualTypeOf<ReceiptVote>();
    expectTypeOf<W.ReceiptAbstention>().toEqualTypeOf<ReceiptAbstention>();
    expectTypeOf<W.ReceiptOutcome>().toEqualTypeOf<ReceiptOutcome>();
  });

  it('type the client’s answers', () => {
    expectTypeOf<Resolved<ConclaveClient['choose']>>().toEqualTypeOf<W.ChooseResponse>();
    expectTypeOf<Resolved<ConclaveClient['outcome']>>().toEqualTypeOf<W.Outcome>();
    expectTypeOf<Resolved<ConclaveClient['waitForOutcome']>>().toEqualTypeOf<W.Outcome>();
    expectTypeOf<W.AgentRoomView['decision']>().toEqualTypeOf<W.AgentDecision | null>();
    expectTypeOf<W.AgentDecision['options']>().toEqualTypeOf<string[]>();
    expectTypeOf<W.Outcome['decisions'][number]['receipt_jws']>().toEqualTypeOf<string | null>();
    expect(Object.keys(DEFAULT_ROOM_CONFIG)).toContain('voting_window');
  });
});
