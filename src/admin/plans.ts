import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Ref } from '../schemas/ref.js'
import { describePlan, getPlanByName, listPlans, putPlan } from '../services/plans.js'
import { actorOf, errors, invalid, json } from './common.js'
import { AuditActorHeaders, Plan, PlanDefinition, PlanParams } from './schemas.js'

const unknownPlan: [number, string] = [404, '`not_found`: no plan has this name']

/** Plans under /admin/v1: listed, read, and made or replaced whole. One service call each. */
const plans: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app

  app.get(
    '/plans',
    {
      schema: {
        operationId: 'listPlans',
        summary: 'Every plan, in name order',
        response: { 200: json('The plans', Type.Array(Ref(Plan))), ...errors() }
      }
    },
    async () => (await listPlans(db)).map(describePlan)
  )

  app.get(
    '/plans/:name',
    {
      schema: {
        operationId: 'getPlan',
        summary: 'One plan',
        params: PlanParams,
        response: { 200: json('The plan', Ref(Plan)), ...errors(unknownPlan) }
      }
    },
    async (request) => describePlan(await getPlanByName(db, request.params.name))
  )

  app.put(
    '/plans/:name',
    {
      schema: {
        operationId: 'putPlan',
        summary: 'Make a plan, or replace its limits and costs',
        description:
          'The plan as given, whole: 1 to 10 limits, at most one enforced and one shadow limit per window (a shadow ' +
          'limit is counted and reported, never refusing), and costs of routes of the public API (a route ' +
          'not named costs 1). An audit event and a `plan.changed` webhook event record each change; the same plan ' +
          'put again changes nothing. Every account on the plan follows, on every instance within a second.',
        headers: AuditActorHeaders,
        params: PlanParams,
        body: Ref(PlanDefinition),
        response: {
          200: json('The plan as changed', Ref(Plan)),
          201: json('The plan, made', Ref(Plan)),
          ...errors(invalid)
        }
      }
    },
    async (request, reply) => {
      const { plan, created } = await putPlan(db, actorOf(request), request.params.name, request.body)
      return reply.code(created ? 201 : 200).send(describePlan(plan))
    }
  )
}

export default plans
